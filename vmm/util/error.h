/* SPDX-License-Identifier: MIT */
/*
 * One-line error reporting.
 *
 * Library code records what went wrong with et_error() and returns -1; the
 * command at the top prints et_last_error() once, prefixed with the program
 * name. Keeping the message instead of printing it lets tests assert on it
 * and lets callers add context ("kernel foo.elf: ...").
 */
#ifndef VMM_ERROR_H
#define VMM_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Records a printf-style message as the last error; always returns -1. */
int et_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, with ": strerror(errno)" appended (errno read at call time). */
int et_error_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prepends "prefix: " to the recorded message; returns -1. */
int et_error_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *et_last_error(void);
void et_clear_error(void);

/*
 * Who prints (docs/architecture.md): library code never prints an error,
 * it records it and returns -1; the command prints it once with
 * et_print_error(). What the user must hear while a run goes on (a
 * fallback taken, sites left alone, a guest doing something odd) goes
 * through et_warn(); a remark on a result that is still good (what a
 * report could not express, a file read only to its last good record)
 * through et_note(), which adds "note: ". Each writes one line to stderr,
 * "earlytrace: " first: every message goes through these functions, so
 * the prefix and the stream are decided here. (Reports, such as the
 * tracer's summary or the flight recorder, write their own lines to the
 * FILE * their caller passes.)
 */
void et_print_error(void);
void et_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void et_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif /* VMM_ERROR_H */
