/* SPDX-License-Identifier: MIT */
/*
 * The Linux x86-64 boot protocol, for kernels without a PVH note: the VMM
 * fills struct boot_params (the "zero page": setup header, E820 map,
 * command line and initrd pointers), builds identity page tables and
 * enters the ELF's entry point (startup_64, physical) in long mode.
 */
#ifndef ARCH_X86_BOOT_LINUX64_H
#define ARCH_X86_BOOT_LINUX64_H

#include <stdint.h>

#include "vmm/loader/kernel_image.h"
#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* struct boot_params offsets (arch/x86/include/uapi/asm/bootparam.h). */
#define BP_ACPI_RSDP_ADDR 0x070
#define BP_EXT_RAMDISK_IMAGE 0x0c0
#define BP_EXT_RAMDISK_SIZE 0x0c4
#define BP_EXT_CMD_LINE_PTR 0x0c8
#define BP_E820_ENTRIES 0x1e8
#define BP_SETUP_HEADER 0x1f1
#define BP_VID_MODE 0x1fa
#define BP_TYPE_OF_LOADER 0x210
#define BP_RAMDISK_IMAGE 0x218
#define BP_RAMDISK_SIZE 0x21c
#define BP_HEAP_END_PTR 0x224
#define BP_CMD_LINE_PTR 0x228
#define BP_E820_TABLE 0x2d0
#define BP_E820_MAX 128
#define BP_E820_ENTRY_SIZE 20
#define BP_SIZE 4096

#define BP_LOADER_UNDEFINED 0xff /* type_of_loader: "other" */
#define BP_VID_MODE_NORMAL 0xffff
#define BP_LOADFLAGS_CAN_USE_HEAP 0x80
#define BP_SYNTH_VERSION 0x020f /* protocol we claim for a bare ELF */

struct linux64_boot_info {
	const char *cmdline;
	uint64_t initrd_paddr; /* 0: none */
	uint64_t initrd_size;
	uint64_t rsdp_paddr; /* 0: no ACPI */
};

/* Fills the zero page at LAYOUT_ZERO_PAGE. The setup header comes from
 * the bzImage when there was one, else it is made up as a boot loader
 * would for a bare vmlinux. */
int linux64_write_boot_params(const struct guest_mem *gm, const struct kernel_image *img,
			      const struct linux64_boot_info *info);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_BOOT_LINUX64_H */
