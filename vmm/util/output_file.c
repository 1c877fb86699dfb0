/* SPDX-License-Identifier: MIT */
/* -o files: never an input, written whole or not at all (output_file.h). */
#include "vmm/util/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/error.h"

int output_refuse_inputs(const char *option, const char *output, const char *const *inputs,
			 size_t nr_inputs)
{
	struct stat out, in;

	/* An output that does not exist yet is no input. */
	if (!output || stat(output, &out))
		return 0;
	for (size_t i = 0; i < nr_inputs; i++) {
		if (!inputs[i] || stat(inputs[i], &in))
			continue;
		if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return et_error("%s %s is the same file as the input %s: refusing to "
					"overwrite it",
					option, output, inputs[i]);
	}
	return 0;
}

/* A signal that ends the command removes the temporary file first. */
static const int cleanup_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM,
				       SIGUSR1, SIGUSR2, SIGXCPU, SIGPWR };
#define NR_CLEANUP_SIGNALS (sizeof(cleanup_signals) / sizeof(cleanup_signals[0]))
static struct sigaction saved[NR_CLEANUP_SIGNALS];
static char *volatile cleanup_path;

static void on_signal(int sig)
{
	char *path = cleanup_path;

	if (path)
		unlink(path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void cleanup_on_signals(char *path)
{
	struct sigaction sa = { .sa_handler = on_signal };

	cleanup_path = path;
	for (size_t i = 0; i < NR_CLEANUP_SIGNALS; i++)
		sigaction(cleanup_signals[i], &sa, &saved[i]);
}

static void no_cleanup_on_signals(void)
{
	for (size_t i = 0; i < NR_CLEANUP_SIGNALS; i++)
		sigaction(cleanup_signals[i], &saved[i], NULL);
	cleanup_path = NULL;
}

static void clear(struct output_file *of)
{
	free(of->target);
	free(of->tmp);
	memset(of, 0, sizeof(*of));
}

int output_file_open(struct output_file *of, const char *path)
{
	struct stat st;
	mode_t mode, mask;
	int fd;

	memset(of, 0, sizeof(*of));
	of->name = path;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A device or a FIFO: nothing to rename over. */
		of->f = fopen(path, "w");
		if (!of->f)
			return et_error_errno("cannot open %s", path);
		return 0;
	}
	/* Through symlinks: the rename replaces the file they lead to. */
	of->target = canonicalize_file_name(path);
	if (!of->target)
		of->target = strdup(path);
	if (!of->target || asprintf(&of->tmp, "%s.XXXXXX", of->target) < 0) {
		of->tmp = NULL;
		clear(of);
		return et_error("out of memory");
	}
	mask = umask(0);
	umask(mask);
	mode = stat(of->target, &st) == 0 ? (st.st_mode & 07777) : (0666 & ~mask);
	fd = mkostemp(of->tmp, O_CLOEXEC);
	if (fd < 0) {
		et_error_errno("cannot create %s", path);
		clear(of);
		return -1;
	}
	cleanup_on_signals(of->tmp);
	if (fchmod(fd, mode) || !(of->f = fdopen(fd, "w"))) {
		et_error_errno("cannot create %s", path);
		close(fd);
		output_file_abort(of);
		return -1;
	}
	return 0;
}

int output_file_commit(struct output_file *of)
{
	bool failed = fflush(of->f) || ferror(of->f);
	int err = errno;

	if (fclose(of->f) && !failed) {
		failed = true;
		err = errno;
	}
	of->f = NULL;
	if (!failed && of->tmp && rename(of->tmp, of->target)) {
		failed = true;
		err = errno;
	}
	if (failed) {
		output_file_abort(of);
		errno = err;
		return et_error_errno("cannot write %s", of->name);
	}
	if (of->tmp)
		no_cleanup_on_signals();
	clear(of);
	return 0;
}

void output_file_abort(struct output_file *of)
{
	if (of->f)
		fclose(of->f);
	if (of->tmp) {
		unlink(of->tmp);
		no_cleanup_on_signals();
	}
	clear(of);
}
