/* SPDX-License-Identifier: MIT */
/*
 * Memory layout of the x86_64 test kernel, shared by entry.S and C; keep
 * kernel.ld in step. As in Linux, the kernel is linked in the top 2 GiB
 * (-mcmodel=kernel) and loaded at its address minus KERNEL_VIRT_BASE.
 */
#ifndef IMAGES_X86_64_LAYOUT_H
#define IMAGES_X86_64_LAYOUT_H

/* Virtual address of physical 0 in the higher-half map. */
#define KERNEL_VIRT_BASE 0xffffffff80000000
/* Physical memory identity-mapped by the boot page tables (2 MiB pages). */
#define IDENTITY_MAP_SIZE 0x100000000	/* 4 GiB */
/* Physical memory mapped at KERNEL_VIRT_BASE. */
#define HIGH_MAP_SIZE 0x40000000	/* 1 GiB */

#endif /* IMAGES_X86_64_LAYOUT_H */
