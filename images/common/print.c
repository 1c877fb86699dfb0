/* SPDX-License-Identifier: MIT */
#include "print.h"

#include "uart.h"

void print_str(const char *s)
{
	while (*s)
		uart_putc(*s++);
}

void print_strn(const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++)
		uart_putc(s[i]);
}

void print_hex(uint64_t v)
{
	int shift = 60;

	print_str("0x");
	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		uart_putc("0123456789abcdef"[(v >> shift) & 0xf]);
}

void print_dec(uint32_t v)
{
	char buf[10];	/* 4294967295 */
	int n = 0;

	do {
		buf[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		uart_putc(buf[--n]);
}

void print_line(const char *s)
{
	print_str(s);
	uart_putc('\n');
}
