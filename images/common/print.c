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

void print_vfmt(const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		int v;

		if (*fmt != '%' || !fmt[1]) {
			uart_putc(*fmt);
			continue;
		}
		switch (*++fmt) {
		case 's':
			print_str(va_arg(ap, const char *));
			break;
		case 'd':
			v = va_arg(ap, int);
			if (v < 0)
				uart_putc('-');
			print_dec(v < 0 ? -(uint32_t)v : (uint32_t)v);
			break;
		case 'u':
			print_dec(va_arg(ap, unsigned));
			break;
		case 'x':
			print_hex(va_arg(ap, unsigned));
			break;
		case 'c':
			uart_putc((char)va_arg(ap, int));
			break;
		default:
			uart_putc(*fmt); /* %% and anything unknown */
			break;
		}
	}
}
