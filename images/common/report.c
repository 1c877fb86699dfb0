/* SPDX-License-Identifier: MIT */
#include "report.h"

#include "phys.h"
#include "print.h"
#include "uart.h"

/* Bytes of each module shown, so tests can see that an initrd arrived. */
#define MODULE_PEEK_BYTES 16

void report_memmap_count(uint32_t n)
{
	print_str("memmap: ");
	print_dec(n);
	print_line(" entries");
}

void report_memmap_entry(uint64_t addr, uint64_t size, uint32_t type)
{
	print_str("memmap ");
	print_hex(addr);
	print_str(" ");
	print_hex(size);
	print_str(" ");
	print_dec(type);
	print_str("\n");
}

void report_modules_count(uint32_t n)
{
	print_str("modules: ");
	print_dec(n);
	print_str("\n");
}

/* Up to MODULE_PEEK_BYTES of the module as text, nonprintables as '.'. */
static void print_module_peek(uint64_t paddr, uint64_t size)
{
	uint64_t len = size < MODULE_PEEK_BYTES ? size : MODULE_PEEK_BYTES;
	const unsigned char *p = phys_ptr(paddr, len);

	if (!p) {
		print_str("(unreachable)");
		return;
	}
	for (uint64_t i = 0; i < len; i++)
		uart_putc(p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '.');
}

void report_module(uint64_t paddr, uint64_t size)
{
	print_str("module ");
	print_hex(paddr);
	print_str(" ");
	print_hex(size);
	print_str(" first=");
	print_module_peek(paddr, size);
	print_str("\n");
}
