/* SPDX-License-Identifier: MIT */
/*
 * Writing KTAP, the kernel's test output format (version 1, as
 * Documentation/dev-tools/ktap.rst specifies it and kselftest and KUnit
 * print it):
 *
 *   KTAP version 1
 *   # diagnostic lines
 *   1..N
 *   # what the next result found
 *   ok 1 description
 *   # why the next one failed
 *   not ok 2 description
 *   not ok 3 description # ERROR
 *   # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:1
 *
 * A result line holds the description and a directive (SKIP, ERROR) and
 * never diagnostic data: TAP parsers (prove's TAP::Parser, tap-parser)
 * read everything after " # " that is not a TAP directive as part of the
 * test's name, so data there would rename the test from run to run.
 * Data goes on a diagnostic line of its own just before the result, where
 * KTAP (and kunit_parser.py) put a test's log.
 *
 * Descriptions and diagnostics are made safe to parse: a '#' in a
 * description, a line break or any byte outside printable ASCII becomes
 * '?', so one call writes exactly one line.
 */
#ifndef VMM_CHECK_KTAP_H
#define VMM_CHECK_KTAP_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ktap_result {
	KTAP_PASS,  /* ok */
	KTAP_FAIL,  /* not ok */
	KTAP_ERROR, /* not ok ... # ERROR: the test could not be run */
	KTAP_SKIP,  /* ok ... # SKIP */
};

struct ktap {
	FILE *out;
	unsigned planned, next;
	unsigned pass, fail, error, skip;
};

/* Writes the version line. */
void ktap_begin(struct ktap *k, FILE *out);
/* "1..n": after ktap_begin and any header diagnostics. */
void ktap_plan(struct ktap *k, unsigned n);
/* One diagnostic line, "# " and the text. */
void ktap_diag(struct ktap *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The next test's result line ("ok N description", " # SKIP" or " # ERROR"
 * after it); data (may be NULL or "") goes on a diagnostic line "# data"
 * just before it. */
void ktap_result(struct ktap *k, enum ktap_result result, const char *description,
		 const char *data);
/* Writes the kselftest-style totals line and flushes; -1 with an error when
 * the stream failed or the results did not match the plan. */
int ktap_end(struct ktap *k);

#ifdef __cplusplus
}
#endif

#endif /* VMM_CHECK_KTAP_H */
