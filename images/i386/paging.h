/* SPDX-License-Identifier: MIT */
/* 32-bit non-PAE paging for the i386 test kernel. */
#ifndef IMAGES_I386_PAGING_H
#define IMAGES_I386_PAGING_H

#include <stdbool.h>

/* Where the higher-half alias of physical address 0 sits. */
#define KERNEL_ALIAS_BASE 0xc0000000u
/* How much physical memory both the identity map and the alias cover. */
#define PAGING_MAPPED_SIZE (16u << 20)

/*
 * Maps [0, PAGING_MAPPED_SIZE) both at its physical addresses and at
 * KERNEL_ALIAS_BASE with 4 MiB pages, and turns paging on. The caller keeps
 * running where it is, thanks to the identity map. Returns false, with
 * paging still off, if the CPU refuses 32-bit paging (see paging_switch.S).
 */
bool paging_enable(void);

#endif /* IMAGES_I386_PAGING_H */
