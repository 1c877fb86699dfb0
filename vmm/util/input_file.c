/* SPDX-License-Identifier: MIT */
/* Input files opened without blocking, regular files only (input_file.h). */
#include "vmm/util/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "vmm/util/error.h"

const char *input_file_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

int input_open(const char *what, const char *path, struct stat *st)
{
	struct stat local;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (!st)
		st = &local;
	if (fd < 0)
		return et_error_errno("cannot open %s%s", what, path);
	if (fstat(fd, st)) {
		et_error_errno("cannot stat %s%s", what, path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		et_error("%s%s is %s, not a regular file", what, path, input_file_kind(st->st_mode));
		close(fd);
		return -1;
	}
	return fd;
}

FILE *input_fopen(const char *what, const char *path)
{
	int fd = input_open(what, path, NULL);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "rb");
	if (!f) {
		et_error_errno("cannot open %s%s", what, path);
		close(fd);
	}
	return f;
}
