/* SPDX-License-Identifier: MIT */
#include "vmm/util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[512];

int et_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return -1;
}

int et_error_errno(const char *fmt, ...)
{
	int saved = errno;
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(last_error, sizeof(last_error), "%s: %s", msg, strerror(saved));
	return -1;
}

int et_error_prefix(const char *fmt, ...)
{
	char prefix[256];
	char old[sizeof(last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, last_error, sizeof(old));
	snprintf(last_error, sizeof(last_error), "%s: %s", prefix, old);
	return -1;
}

const char *et_last_error(void)
{
	return last_error[0] ? last_error : "unknown error";
}

void et_clear_error(void)
{
	last_error[0] = '\0';
}

/* The one place that writes the prefix and chooses the stream. Each line
 * is formatted before it is written, so it reaches stderr in one write. */
static void say(const char *kind, const char *msg)
{
	fprintf(stderr, "earlytrace: %s%s\n", kind, msg);
}

void et_print_error(void)
{
	say("", et_last_error());
}

__attribute__((format(printf, 2, 0)))
static void say_formatted(const char *kind, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	say(kind, msg);
}

void et_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_formatted("", fmt, ap);
	va_end(ap);
}

void et_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_formatted("note: ", fmt, ap);
	va_end(ap);
}
