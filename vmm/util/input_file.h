/* SPDX-License-Identifier: MIT */
/*
 * Opening an input file (kernel, initrd, symbols, trace, expectations)
 * without blocking: open() of a FIFO with no writer would wait forever,
 * and a device or directory is no input either. The file is opened with
 * O_NONBLOCK (which regular files ignore) and refused unless fstat() says
 * it is a regular file.
 */
#ifndef VMM_UTIL_INPUT_FILE_H
#define VMM_UTIL_INPUT_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/* A read-only descriptor of a regular file, its stat in *st (may be NULL);
 * -1 with an error ("cannot open <what>F: ...", "<what>F is a FIFO, not a
 * regular file") otherwise. what: "" or e.g. "trace file ". */
int input_open(const char *what, const char *path, struct stat *st);

/* The same as a stdio stream ("rb"); NULL with an error. */
FILE *input_fopen(const char *what, const char *path);

/* The whole file in a malloc'ed buffer (kernels, initrds, System.map),
 * opened as input_open() opens it; a file over max bytes is refused, and
 * one whose size fstat() does not know (/proc, /sys) is read to its end.
 * 0, or -1 with an error. */
int input_read_whole_file(const char *path, size_t max, uint8_t **data, size_t *size);

/* "a FIFO", "a directory", ... for a st_mode that is not a regular file. */
const char *input_file_kind(mode_t mode);

#endif /* VMM_UTIL_INPUT_FILE_H */
