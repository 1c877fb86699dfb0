/* SPDX-License-Identifier: MIT */
#include "arch/x86/boot/linux64.h"

#include <string.h>

#include "arch/x86/boot/memmap.h"
#include "arch/x86/layout.h"
#include "vmm/util/error.h"

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void write_setup_header(uint8_t *bp, const struct kernel_image *img, size_t cmdline_max)
{
	if (img->from_bzimage) {
		memcpy(bp + BP_SETUP_HEADER, img->bzimage.setup_header,
		       img->bzimage.setup_header_len);
	} else {
		put16(bp + BZ_OFF_BOOT_FLAG, BZ_BOOT_FLAG);
		put32(bp + BZ_OFF_HEADER, BZ_HEADER_MAGIC);
		put16(bp + BZ_OFF_VERSION, BP_SYNTH_VERSION);
		bp[BZ_OFF_LOADFLAGS] = BZ_LOADFLAGS_LOADED_HIGH;
		put32(bp + BZ_OFF_CMDLINE_SIZE, (uint32_t)cmdline_max);
		put32(bp + BZ_OFF_INITRD_ADDR_MAX, 0x7fffffff);
	}
	put16(bp + BP_VID_MODE, BP_VID_MODE_NORMAL);
	bp[BP_TYPE_OF_LOADER] = BP_LOADER_UNDEFINED;
	bp[BZ_OFF_LOADFLAGS] |= BP_LOADFLAGS_CAN_USE_HEAP;
	put16(bp + BP_HEAP_END_PTR, 0xfe00);
}

int linux64_write_boot_params(const struct guest_mem *gm, const struct kernel_image *img,
			      const struct linux64_boot_info *info)
{
	struct memmap_entry map[BP_E820_MAX];
	uint8_t *bp = guest_mem_ptr(gm, LAYOUT_ZERO_PAGE, BP_SIZE);
	size_t len = info->cmdline ? strlen(info->cmdline) : 0;
	size_t cmdline_max = LAYOUT_CMDLINE_MAX - 1;
	unsigned n;

	if (!bp)
		return et_error("no RAM for the zero page");
	if (img->from_bzimage && img->bzimage.cmdline_size < cmdline_max)
		cmdline_max = img->bzimage.cmdline_size;
	if (len > cmdline_max)
		return et_error("kernel command line is %zu bytes; this kernel takes at most %zu",
				len, cmdline_max);
	if (guest_mem_write(gm, LAYOUT_CMDLINE, len ? info->cmdline : "", len + 1))
		return -1;

	memset(bp, 0, BP_SIZE);
	write_setup_header(bp, img, cmdline_max);
	put32(bp + BP_CMD_LINE_PTR, LAYOUT_CMDLINE);
	put32(bp + BP_EXT_CMD_LINE_PTR, 0);
	put64(bp + BP_ACPI_RSDP_ADDR, info->rsdp_paddr);

	if (info->initrd_size) {
		uint64_t end = info->initrd_paddr + info->initrd_size;
		uint32_t max;

		memcpy(&max, bp + BZ_OFF_INITRD_ADDR_MAX, 4);
		if (end - 1 > max)
			return et_error("initrd ends at 0x%llx, above this kernel's limit 0x%x",
					(unsigned long long)end, max);
		put32(bp + BP_RAMDISK_IMAGE, (uint32_t)info->initrd_paddr);
		put32(bp + BP_RAMDISK_SIZE, (uint32_t)info->initrd_size);
		put32(bp + BP_EXT_RAMDISK_IMAGE, (uint32_t)(info->initrd_paddr >> 32));
		put32(bp + BP_EXT_RAMDISK_SIZE, (uint32_t)(info->initrd_size >> 32));
	}

	/* The same memory map PVH guests get, in E820's packed layout. */
	n = memmap_build(gm, map, BP_E820_MAX);
	bp[BP_E820_ENTRIES] = (uint8_t)n;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *e = bp + BP_E820_TABLE + i * BP_E820_ENTRY_SIZE;

		put64(e, map[i].addr);
		put64(e + 8, map[i].size);
		put32(e + 16, map[i].type);
	}
	return 0;
}
