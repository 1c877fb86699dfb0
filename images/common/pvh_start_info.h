/* SPDX-License-Identifier: MIT */
/*
 * The PVH boot ABI as a guest sees it (Xen's arch-x86/hvm/start_info.h,
 * written out here; the VMM has its own copy). The entry point finds a
 * struct hvm_start_info at the guest-physical address in ebx.
 */
#ifndef IMAGES_PVH_START_INFO_H
#define IMAGES_PVH_START_INFO_H

#include <stdint.h>

#define XEN_HVM_START_MAGIC_VALUE 0x336ec578u
/* ELF note type carrying the 32-bit physical entry point. */
#define XEN_ELFNOTE_PHYS32_ENTRY 18

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;	/* memmap_* fields exist from version 1 on */
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

_Static_assert(sizeof(struct hvm_start_info) == 56, "hvm_start_info layout");
_Static_assert(sizeof(struct hvm_modlist_entry) == 32, "hvm_modlist_entry layout");
_Static_assert(sizeof(struct hvm_memmap_table_entry) == 24, "memmap entry layout");

#endif /* IMAGES_PVH_START_INFO_H */
