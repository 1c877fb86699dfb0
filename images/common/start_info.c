/* SPDX-License-Identifier: MIT */
#include "start_info.h"

#include "phys.h"
#include "print.h"
#include "uart.h"

/* Caps on what we print, so a garbage count cannot flood the console. */
#define MEMMAP_PRINT_MAX 128
#define MODULES_PRINT_MAX 16
/* Bytes of each module shown, so tests can see that an initrd arrived. */
#define MODULE_PEEK_BYTES 16

const struct hvm_start_info *start_info_get(uint32_t pa)
{
	const struct hvm_start_info *si = phys_ptr(pa, sizeof(*si));

	if (!si || si->magic != XEN_HVM_START_MAGIC_VALUE)
		return NULL;
	return si;
}

const char *start_info_cmdline(const struct hvm_start_info *si)
{
	const char *s = NULL;

	if (si->cmdline_paddr)
		s = phys_ptr(si->cmdline_paddr, START_INFO_CMDLINE_MAX);
	return s ? s : "";
}

void start_info_print_memmap(const struct hvm_start_info *si)
{
	const struct hvm_memmap_table_entry *map = NULL;
	/* Version 0 of the ABI has no memory map fields at all. */
	uint32_t n = si->version >= 1 ? si->memmap_entries : 0;

	print_str("memmap: ");
	print_dec(n);
	print_line(" entries");
	if (n > MEMMAP_PRINT_MAX)
		n = MEMMAP_PRINT_MAX;
	if (n)
		map = phys_ptr(si->memmap_paddr, (uint64_t)n * sizeof(*map));
	if (n && !map) {
		print_line("memmap unreachable");
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		print_str("memmap ");
		print_hex(map[i].addr);
		print_str(" ");
		print_hex(map[i].size);
		print_str(" ");
		print_dec(map[i].type);
		print_str("\n");
	}
}

/* Up to MODULE_PEEK_BYTES of the module as text, nonprintables as '.'. */
static void print_module_peek(const struct hvm_modlist_entry *mod)
{
	uint64_t len = mod->size < MODULE_PEEK_BYTES ? mod->size : MODULE_PEEK_BYTES;
	const unsigned char *p = phys_ptr(mod->paddr, len);

	if (!p) {
		print_str("(unreachable)");
		return;
	}
	for (uint64_t i = 0; i < len; i++)
		uart_putc(p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '.');
}

void start_info_print_modules(const struct hvm_start_info *si)
{
	const struct hvm_modlist_entry *mods = NULL;
	uint32_t n = si->nr_modules;

	print_str("modules: ");
	print_dec(n);
	print_str("\n");
	if (n > MODULES_PRINT_MAX)
		n = MODULES_PRINT_MAX;
	if (n)
		mods = phys_ptr(si->modlist_paddr, (uint64_t)n * sizeof(*mods));
	if (n && !mods) {
		print_line("modules unreachable");
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		print_str("module ");
		print_hex(mods[i].paddr);
		print_str(" ");
		print_hex(mods[i].size);
		print_str(" first=");
		print_module_peek(&mods[i]);
		print_str("\n");
	}
}
