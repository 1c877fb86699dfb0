/* SPDX-License-Identifier: MIT */
/* Input files opened without blocking, regular files only (input_file.h). */
#include "vmm/util/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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

/* A file whose size fstat() does not know (/proc, /sys report 0): read
 * to its end, up to the same limit. */
static int read_unsized(int fd, const char *path, size_t max, uint8_t **data, size_t *size)
{
	size_t cap = 1 << 16, done = 0;
	uint8_t *buf = malloc(cap);

	for (;;) {
		ssize_t n;

		if (!buf)
			return et_error("out of memory reading %s", path);
		n = read(fd, buf + done, cap - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return et_error_errno("cannot read %s", path);
		}
		if (n == 0)
			break;
		done += (size_t)n;
		if (done == cap) {
			uint8_t *bigger;

			if (cap >= max) {
				free(buf);
				return et_error("%s is too large (over %zu bytes)", path, max);
			}
			bigger = realloc(buf, cap * 2);
			if (!bigger)
				free(buf);
			buf = bigger;
			cap *= 2;
		}
	}
	*data = buf;
	*size = done;
	return 0;
}

int input_read_whole_file(const char *path, size_t max, uint8_t **data, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	size_t done = 0;
	int fd, ret;

	/* Never blocks on a FIFO; refuses what is not a regular file. */
	fd = input_open("", path, &st);
	if (fd < 0)
		return -1;
	if (st.st_size == 0) {
		ret = read_unsized(fd, path, max, data, size);
		close(fd);
		return ret;
	}
	if ((unsigned long long)st.st_size > max) {
		close(fd);
		return et_error("%s is too large (%lld bytes)", path, (long long)st.st_size);
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return et_error("out of memory reading %s", path);
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			close(fd);
			return n < 0 ? et_error_errno("cannot read %s", path)
				     : et_error("%s shrank while being read", path);
		}
		done += (size_t)n;
	}
	close(fd);
	*data = buf;
	*size = done;
	return 0;
}
