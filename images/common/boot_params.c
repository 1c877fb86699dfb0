/* SPDX-License-Identifier: MIT */
#include "boot_params.h"

#include "phys.h"
#include "report.h"

/* A 64-bit value split over a setup header field and its ext_ high half. */
static uint64_t join64(uint32_t lo, uint32_t hi)
{
	return (uint64_t)hi << 32 | lo;
}

const struct boot_params *boot_params_get(uint64_t pa)
{
	const struct boot_params *bp = phys_ptr(pa, sizeof(*bp));

	if (!bp || bp->hdr.header != BOOT_PARAMS_HDR_MAGIC ||
	    bp->hdr.boot_flag != BOOT_PARAMS_BOOT_FLAG)
		return NULL;
	return bp;
}

const char *boot_params_cmdline(const struct boot_params *bp)
{
	uint64_t pa = join64(bp->hdr.cmd_line_ptr, bp->ext_cmd_line_ptr);
	const char *s = NULL;

	if (pa)
		s = phys_ptr(pa, BOOT_PARAMS_CMDLINE_MAX);
	return s ? s : "";
}

void boot_params_print_memmap(const struct boot_params *bp)
{
	/* The table has BOOT_PARAMS_E820_MAX slots; a larger count is garbage
	 * (Linux clamps it too), so report it but print only what fits. */
	uint32_t n = bp->e820_entries;

	report_memmap_count(n);
	if (n > BOOT_PARAMS_E820_MAX)
		n = BOOT_PARAMS_E820_MAX;
	for (uint32_t i = 0; i < n; i++)
		report_memmap_entry(bp->e820_table[i].addr, bp->e820_table[i].size,
				    bp->e820_table[i].type);
}

void boot_params_print_modules(const struct boot_params *bp)
{
	uint64_t size = join64(bp->hdr.ramdisk_size, bp->ext_ramdisk_size);

	if (!size) {
		report_modules_count(0);
		return;
	}
	report_modules_count(1);
	report_module(join64(bp->hdr.ramdisk_image, bp->ext_ramdisk_image), size);
}
