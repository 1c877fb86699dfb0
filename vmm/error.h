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

#ifdef __cplusplus
}
#endif

#endif /* VMM_ERROR_H */
