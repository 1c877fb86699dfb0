/* SPDX-License-Identifier: MIT */
/*
 * Printable ASCII: what text from an untrusted source (a guest, a trace
 * file, a domain definition) may keep when it goes into a line a person
 * or a parser reads, so that it cannot start lines or send terminal
 * escapes of its own.
 */
#ifndef VMM_UTIL_PRINTABLE_H
#define VMM_UTIL_PRINTABLE_H

#include <stdbool.h>
#include <stddef.h>

static inline bool printable_ascii(int c)
{
	return c >= 0x20 && c <= 0x7e;
}

/* Replaces every byte of s[0..n) that is not printable ASCII with '?'. */
static inline void printable_sanitize(char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!printable_ascii((unsigned char)s[i]))
			s[i] = '?';
}

#endif /* VMM_UTIL_PRINTABLE_H */
