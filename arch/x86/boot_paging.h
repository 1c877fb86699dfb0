/* SPDX-License-Identifier: MIT */
/* Identity page tables for a kernel entered in 64-bit mode. */
#ifndef ARCH_X86_BOOT_PAGING_H
#define ARCH_X86_BOOT_PAGING_H

#include <stdint.h>

#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define X86_PTE_PRESENT (1ull << 0)
#define X86_PTE_WRITE (1ull << 1)
#define X86_PTE_LARGE (1ull << 7) /* 2 MiB page in a page directory */

/* Writes PML4, PDPT and page directories at their layout addresses so the
 * first 4 GiB are mapped 1:1 with 2 MiB pages; returns the CR3 value, or 0
 * with an error when RAM cannot hold them. */
uint64_t boot_paging_identity_4g(const struct guest_mem *gm);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_BOOT_PAGING_H */
