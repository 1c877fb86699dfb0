/* SPDX-License-Identifier: MIT */
/*
 * Reaching guest-physical memory handed over by the VMM (start_info, the
 * command line, the memory map, modules).
 *
 * Both kernels can address the first 4 GiB at their physical addresses:
 * i386 because it reads these structures before it turns paging on, x86_64
 * because its boot page tables identity-map the first 4 GiB. Anything above
 * that is out of reach, and callers must say so rather than fault.
 */
#ifndef IMAGES_PHYS_H
#define IMAGES_PHYS_H

#include <stddef.h>
#include <stdint.h>

#define PHYS_REACHABLE_END 0x100000000ull

/* A pointer to [pa, pa + len), or NULL if any of it is out of reach. */
static inline const void *phys_ptr(uint64_t pa, uint64_t len)
{
	if (pa >= PHYS_REACHABLE_END || len > PHYS_REACHABLE_END - pa)
		return NULL;
	return (const void *)(uintptr_t)pa;
}

#endif /* IMAGES_PHYS_H */
