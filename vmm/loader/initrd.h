/* SPDX-License-Identifier: MIT */
/* Placing an initial ramdisk in guest RAM. */
#ifndef VMM_LOADER_INITRD_H
#define VMM_LOADER_INITRD_H

#include <stdint.h>

#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Loads the file at the top of low RAM, page-aligned, as Linux boot loaders
 * do (it keeps the ramdisk clear of the kernel's early allocations just
 * above its image). Fails if it would overlap [0, kernel_end).
 */
int initrd_load(const struct guest_mem *gm, const char *path, uint64_t kernel_end,
		uint64_t *paddr, uint64_t *size);

#ifdef __cplusplus
}
#endif

#endif /* VMM_LOADER_INITRD_H */
