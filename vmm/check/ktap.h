/* SPDX-License-Identifier: MIT */
/*
 * Writing KTAP, the kernel's test output format (version 1, as
 * Documentation/dev-tools/ktap.rst specifies it and kselftest and KUnit
 * print it):
 *
 *   KTAP version 1
 *   # diagnostic lines
 *   1..N
 *   ok 1 description # diagnostic data
 *   # why the next one failed
 *   not ok 2 description
 *   # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0
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
/* The next test's result line; data (may be NULL) follows " # " (after
 * the directive for ERROR and SKIP). */
void ktap_result(struct ktap *k, enum ktap_result result, const char *description,
		 const char *data);
/* Writes the kselftest-style totals line and flushes; -1 with an error when
 * the stream failed or the results did not match the plan. */
int ktap_end(struct ktap *k);

#ifdef __cplusplus
}
#endif

#endif /* VMM_CHECK_KTAP_H */
