/* SPDX-License-Identifier: MIT */
/* Console output helpers on top of the UART; no libc. */
#ifndef IMAGES_PRINT_H
#define IMAGES_PRINT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void print_str(const char *s);
/* At most max bytes of s, stopping early at a NUL. */
void print_strn(const char *s, size_t max);
/* "0x" and lower-case hex digits, no leading zeros ("0x0" for zero). */
void print_hex(uint64_t v);
/* Decimal. 32-bit only: 64-bit division would need libgcc on i386. */
void print_dec(uint32_t v);
/* print_str(s) followed by "\n". */
void print_line(const char *s);
/* A printf format with %s, %d, %u, %x, %c and %% only (no flags, widths
 * or sizes: ints and pointers to strings), for panic(). */
void print_vfmt(const char *fmt, va_list ap);

#endif /* IMAGES_PRINT_H */
