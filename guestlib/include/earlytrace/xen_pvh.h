/* SPDX-License-Identifier: MIT */
/*
 * The PVH boot ABI (Xen's HVM direct boot: xen/include/public/arch-x86/hvm/
 * start_info.h, written out here), shared by the VMM that writes these
 * structures and the guests that read them. The entry point, given by an
 * ELF note of type XEN_ELFNOTE_PHYS32_ENTRY, finds a struct hvm_start_info
 * at the guest-physical address in ebx.
 */
#ifndef EARLYTRACE_XEN_PVH_H
#define EARLYTRACE_XEN_PVH_H

#include <stdint.h>

#define XEN_HVM_START_MAGIC_VALUE 0x336ec578u
#define XEN_HVM_START_VERSION 1u /* memmap_* fields exist from version 1 on */
/* ELF note type carrying the 32-bit physical entry point. */
#define XEN_ELFNOTE_PHYS32_ENTRY 18

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;	/* struct hvm_modlist_entry[nr_modules] */
	uint64_t cmdline_paddr;	/* NUL-terminated, 0 if none */
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;	/* struct hvm_memmap_table_entry[memmap_entries] */
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;		/* E820 type: 1 RAM, 2 reserved, ... */
	uint32_t reserved;
};

#ifdef __cplusplus
static_assert(sizeof(struct hvm_start_info) == 56, "hvm_start_info layout");
#else
_Static_assert(sizeof(struct hvm_start_info) == 56, "hvm_start_info layout");
_Static_assert(sizeof(struct hvm_modlist_entry) == 32, "hvm_modlist_entry layout");
_Static_assert(sizeof(struct hvm_memmap_table_entry) == 24, "memmap entry layout");
#endif

#endif /* EARLYTRACE_XEN_PVH_H */
