/* SPDX-License-Identifier: MIT */
#include "arch/x86/boot/memmap.h"

#include "arch/x86/layout.h"

static void add(struct memmap_entry *map, unsigned *n, unsigned max, uint64_t addr,
		uint64_t size, uint32_t type)
{
	if (*n < max)
		map[(*n)++] = (struct memmap_entry){ addr, size, type };
}

unsigned memmap_build(const struct guest_mem *gm, struct memmap_entry *map, unsigned max)
{
	unsigned n = 0;

	/* Conventional memory up to the EBDA, then the PC's reserved area
	 * (EBDA, VGA, option and BIOS ROMs) up to 1 MiB. */
	add(map, &n, max, 0, LAYOUT_EBDA_START, E820_TYPE_RAM);
	add(map, &n, max, LAYOUT_EBDA_START, LAYOUT_HIMEM_START - LAYOUT_EBDA_START,
	    E820_TYPE_RESERVED);
	add(map, &n, max, LAYOUT_HIMEM_START, guest_mem_low_end(gm) - LAYOUT_HIMEM_START,
	    E820_TYPE_RAM);
	for (unsigned i = 1; i < gm->nr_regions; i++)
		add(map, &n, max, gm->regions[i].gpa, gm->regions[i].size, E820_TYPE_RAM);
	return n;
}
