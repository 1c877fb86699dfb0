/* SPDX-License-Identifier: MIT */
/*
 * Function-name patterns as ftrace's set_ftrace_filter reads them: a plain
 * name matches exactly; "foo*", "*foo" and "*foo*" are prefix, suffix and
 * substring matches; anything else with *, ?, [...] or a backslash is a
 * full glob (lib/glob.c semantics: [a-z] ranges, [!...] or [^...]
 * negation, a ']' first in a class is literal, backslash escapes).
 * Unlike ftrace, an unterminated '[' or a trailing backslash is an error,
 * so a typo on the command line is reported instead of matching nothing.
 */
#ifndef VMM_SITES_GLOB_H
#define VMM_SITES_GLOB_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum glob_kind {
	GLOB_FULL,	/* "foo": exact */
	GLOB_FRONT,	/* "foo*" */
	GLOB_END,	/* "*foo" */
	GLOB_MIDDLE,	/* "*foo*" */
	GLOB_GENERAL,	/* anything else */
};

struct glob {
	const char *pattern; /* as given; not owned */
	enum glob_kind kind;
	const char *text;    /* the literal part for the fast kinds */
	size_t len;
};

/* 0, or -1 with et_last_error() saying what is wrong with the pattern. */
int glob_compile(struct glob *g, const char *pattern);
bool glob_match(const struct glob *g, const char *name);

/* The general matcher on its own (pattern assumed well-formed). */
bool glob_match_general(const char *pattern, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* VMM_SITES_GLOB_H */
