/* SPDX-License-Identifier: MIT */
/*
 * The files commands write with -o (report, check, domain-xml): never one
 * of the command's inputs, and written whole or not at all. The output goes
 * to a temporary file next to FILE, renamed over it once complete, so FILE
 * is always one complete output: the old one until the new one is done, and
 * when two commands write the same FILE, the one that finished last (each
 * wrote a file of its own). Devices, FIFOs and other files that are not
 * regular (/dev/stdout, /dev/null) are written in place.
 */
#ifndef VMM_UTIL_OUTPUT_FILE_H
#define VMM_UTIL_OUTPUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct output_file {
	FILE *f;
	char *target; /* what the rename replaces: FILE, its symlinks followed */
	char *tmp;    /* the temporary file, NULL when written in place */
	const char *name; /* FILE as the user gave it, for messages */
};

/*
 * Refuses an output that is the same file as one of the inputs (same
 * device and inode: through symlinks and hard links too). inputs may hold
 * NULLs (options not given). 0, or -1 with an error naming both.
 */
int output_refuse_inputs(const char *option, const char *output, const char *const *inputs,
			 size_t nr_inputs);

/* Creates the temporary file (or opens a non-regular FILE); of->f is where
 * to write. 0, or -1 with an error. */
int output_file_open(struct output_file *of, const char *path);

/* Flushes, checks every write succeeded and renames the file into place.
 * 0, or -1 with an error (the temporary file removed, FILE untouched). */
int output_file_commit(struct output_file *of);

/* Gives up: removes the temporary file, FILE stays as it was. */
void output_file_abort(struct output_file *of);

#endif /* VMM_UTIL_OUTPUT_FILE_H */
