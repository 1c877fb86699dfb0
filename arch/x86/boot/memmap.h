/* SPDX-License-Identifier: MIT */
/* The guest's physical memory map, as every boot protocol reports it. */
#ifndef ARCH_X86_BOOT_MEMMAP_H
#define ARCH_X86_BOOT_MEMMAP_H

#include <stdint.h>

#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define E820_TYPE_RAM 1u
#define E820_TYPE_RESERVED 2u

struct memmap_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type; /* E820_TYPE_* */
};

/* Fills `map` (room for `max`) and returns the number of entries:
 * conventional memory, the reserved PC area up to 1 MiB, RAM from 1 MiB,
 * and RAM above 4 GiB when there is any. */
unsigned memmap_build(const struct guest_mem *gm, struct memmap_entry *map, unsigned max);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_BOOT_MEMMAP_H */
