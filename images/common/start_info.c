/* SPDX-License-Identifier: MIT */
#include "start_info.h"

#include "phys.h"
#include "print.h"
#include "report.h"

/* Caps on what we print, so a garbage count cannot flood the console. */
#define MEMMAP_PRINT_MAX 128
#define MODULES_PRINT_MAX 16

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

	report_memmap_count(n);
	if (n > MEMMAP_PRINT_MAX)
		n = MEMMAP_PRINT_MAX;
	if (n)
		map = phys_ptr(si->memmap_paddr, (uint64_t)n * sizeof(*map));
	if (n && !map) {
		print_line("memmap unreachable");
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		report_memmap_entry(map[i].addr, map[i].size, map[i].type);
}

void start_info_print_modules(const struct hvm_start_info *si)
{
	const struct hvm_modlist_entry *mods = NULL;
	uint32_t n = si->nr_modules;

	report_modules_count(n);
	if (n > MODULES_PRINT_MAX)
		n = MODULES_PRINT_MAX;
	if (n)
		mods = phys_ptr(si->modlist_paddr, (uint64_t)n * sizeof(*mods));
	if (n && !mods) {
		print_line("modules unreachable");
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		report_module(mods[i].paddr, mods[i].size);
}
