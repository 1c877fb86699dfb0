/* SPDX-License-Identifier: MIT */
/*
 * PVH boot (Xen's HVM direct boot ABI, which Linux and our test kernels
 * implement): the VMM writes a struct hvm_start_info with the memory map,
 * the command line and the modules (initrd), and enters the kernel at its
 * PHYS32_ENTRY in 32-bit protected mode with ebx pointing at it.
 */
#ifndef ARCH_X86_BOOT_PVH_H
#define ARCH_X86_BOOT_PVH_H

#include <stdint.h>

#include "arch/x86/boot/memmap.h"
#include "earlytrace/xen_pvh.h"
#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HVM_START_MAGIC XEN_HVM_START_MAGIC_VALUE
#define HVM_START_VERSION XEN_HVM_START_VERSION

struct pvh_boot_info {
	const char *cmdline;   /* NULL or "" for none */
	uint64_t initrd_paddr; /* 0 when there is no initrd */
	uint64_t initrd_size;
	uint64_t rsdp_paddr;   /* 0: no ACPI */
};

/* Writes start_info, memory map, module list and command line at their
 * fixed places (arch/x86/layout.h). Returns 0 or -1 with an error. */
int pvh_write_start_info(const struct guest_mem *gm, const struct pvh_boot_info *info);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_BOOT_PVH_H */
