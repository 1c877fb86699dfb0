/* SPDX-License-Identifier: MIT */
/*
 * The Linux x86 boot protocol's struct boot_params (the 4 KiB "zero page")
 * as a guest sees it: Documentation/arch/x86/boot.rst and zero-page.rst,
 * written out here with only the fields the test kernels read named and the
 * rest as padding. A 64-bit boot protocol entry finds it at the physical
 * address in rsi.
 */
#ifndef IMAGES_BOOT_PARAMS_H
#define IMAGES_BOOT_PARAMS_H

#include <stddef.h>
#include <stdint.h>

/* setup_header.header: "HdrS". */
#define BOOT_PARAMS_HDR_MAGIC 0x53726448u
/* setup_header.boot_flag. */
#define BOOT_PARAMS_BOOT_FLAG 0xaa55u
/* Slots in boot_params.e820_table (E820_MAX_ENTRIES_ZEROPAGE). */
#define BOOT_PARAMS_E820_MAX 128

struct boot_e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;		/* 1 RAM, 2 reserved, ... */
} __attribute__((packed));

/* The part of the real-mode setup header (at 0x1f1) we read. */
struct setup_header {
	uint8_t setup_sects;		/* 0x1f1 */
	uint16_t root_flags;		/* 0x1f2 */
	uint32_t syssize;		/* 0x1f4 */
	uint16_t ram_size;		/* 0x1f8 */
	uint16_t vid_mode;		/* 0x1fa */
	uint16_t root_dev;		/* 0x1fc */
	uint16_t boot_flag;		/* 0x1fe: 0xaa55 */
	uint16_t jump;			/* 0x200 */
	uint32_t header;		/* 0x202: "HdrS" */
	uint16_t version;		/* 0x206 */
	uint32_t realmode_swtch;	/* 0x208 */
	uint16_t start_sys_seg;		/* 0x20c */
	uint16_t kernel_version;	/* 0x20e */
	uint8_t type_of_loader;		/* 0x210 */
	uint8_t loadflags;		/* 0x211 */
	uint16_t setup_move_size;	/* 0x212 */
	uint32_t code32_start;		/* 0x214 */
	uint32_t ramdisk_image;		/* 0x218: low 32 bits of the initrd address */
	uint32_t ramdisk_size;		/* 0x21c: low 32 bits of its size */
	uint32_t bootsect_kludge;	/* 0x220 */
	uint16_t heap_end_ptr;		/* 0x224 */
	uint8_t ext_loader_ver;		/* 0x226 */
	uint8_t ext_loader_type;	/* 0x227 */
	uint32_t cmd_line_ptr;		/* 0x228: low 32 bits of the command line address */
} __attribute__((packed));

struct boot_params {
	uint8_t _pad0[0x0c0];
	uint32_t ext_ramdisk_image;	/* 0x0c0: high 32 bits of ramdisk_image */
	uint32_t ext_ramdisk_size;	/* 0x0c4: high 32 bits of ramdisk_size */
	uint32_t ext_cmd_line_ptr;	/* 0x0c8: high 32 bits of cmd_line_ptr */
	uint8_t _pad1[0x1e8 - 0x0cc];
	uint8_t e820_entries;		/* 0x1e8 */
	uint8_t _pad2[0x1f1 - 0x1e9];
	struct setup_header hdr;	/* 0x1f1 */
	uint8_t _pad3[0x2d0 - 0x1f1 - sizeof(struct setup_header)];
	struct boot_e820_entry e820_table[BOOT_PARAMS_E820_MAX];	/* 0x2d0 */
	uint8_t _pad4[0x1000 - 0x2d0 - BOOT_PARAMS_E820_MAX * sizeof(struct boot_e820_entry)];
} __attribute__((packed));

_Static_assert(sizeof(struct boot_e820_entry) == 20, "boot_e820_entry layout");
_Static_assert(offsetof(struct boot_params, ext_ramdisk_image) == 0x0c0, "boot_params layout");
_Static_assert(offsetof(struct boot_params, ext_ramdisk_size) == 0x0c4, "boot_params layout");
_Static_assert(offsetof(struct boot_params, ext_cmd_line_ptr) == 0x0c8, "boot_params layout");
_Static_assert(offsetof(struct boot_params, e820_entries) == 0x1e8, "boot_params layout");
_Static_assert(offsetof(struct boot_params, hdr.boot_flag) == 0x1fe, "boot_params layout");
_Static_assert(offsetof(struct boot_params, hdr.header) == 0x202, "boot_params layout");
_Static_assert(offsetof(struct boot_params, hdr.ramdisk_image) == 0x218, "boot_params layout");
_Static_assert(offsetof(struct boot_params, hdr.ramdisk_size) == 0x21c, "boot_params layout");
_Static_assert(offsetof(struct boot_params, hdr.cmd_line_ptr) == 0x228, "boot_params layout");
_Static_assert(offsetof(struct boot_params, e820_table) == 0x2d0, "boot_params layout");
_Static_assert(sizeof(struct boot_params) == 0x1000, "boot_params is the 4 KiB zero page");

/* Longest command line we read, as for PVH; Linux/x86 allows 2048 bytes. */
#define BOOT_PARAMS_CMDLINE_MAX 4096

/* The boot_params at physical address pa, or NULL if it is out of reach or
 * its setup header lacks "HdrS" or the 0xaa55 boot flag. */
const struct boot_params *boot_params_get(uint64_t pa);

/* The command line (hdr.cmd_line_ptr | ext_cmd_line_ptr << 32; at most
 * BOOT_PARAMS_CMDLINE_MAX bytes, maybe without a NUL within them), or "" if
 * there is none or it is out of reach. */
const char *boot_params_cmdline(const struct boot_params *bp);

/* "memmap: <n> entries", then "memmap <addr> <size> <type>" per E820 entry. */
void boot_params_print_memmap(const struct boot_params *bp);

/* "modules: 1" and a "module ..." line if there is an initrd (ramdisk size
 * not zero), else "modules: 0". */
void boot_params_print_modules(const struct boot_params *bp);

#endif /* IMAGES_BOOT_PARAMS_H */
