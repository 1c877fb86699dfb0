/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets of the kernel loaders and symbol readers (see
 * targets.h): elf, bzimage, system_map and kallsyms.
 */
#include <stdlib.h>
#include <string.h>

#include "arch/x86/boot/boot.h"
#include "fuzz/targets.h"
#include "fuzz/targets_helpers.h"
#include "trampolines/region.h"
#include "vmm/loader/bzimage.h"
#include "vmm/loader/decompress.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/mem/guest_mem.h"
#include "vmm/sites/sites.h"
#include "vmm/symbols/kallsyms.h"
#include "vmm/symbols/symbols.h"

/* Larger announced kernels are skipped, not decompressed: the VMM accepts
 * up to BZ_MAX_KERNEL_SIZE (1 GiB), which is memory a fuzzer cannot spend
 * per input. The check for the real limit is exercised all the same. */
#define FUZZ_MAX_KERNEL (64u << 20)
/* Guest RAM a parsed kernel is loaded into. */
#define FUZZ_KERNEL_RAM (16u << 20)

/* ---- kernels ---------------------------------------------------------- */

/* What the commands do with a kernel once it parsed. */
static void use_kernel(struct kernel_image *img)
{
	uint8_t id[64];
	size_t id_len;
	struct symbols syms;
	enum boot_protocol proto;

	kernel_image_build_id(img, id, &id_len);
	kernel_image_vaddr_bytes(img, img->entry, 16, NULL, NULL);
	if (symbols_load(&syms, img, NULL) == 0) {
		struct site_table sites;
		struct tramp_region region;
		char buf[128];

		symtab_format(&syms.tab, img->entry, buf, sizeof(buf));
		if (sites_find(&sites, img, &syms) == 0)
			sites_free(&sites);
		tramp_region_find(&region, img, &syms);
		symbols_free(&syms);
	}
	if (boot_choose_protocol(img, BOOT_AUTO, &proto) == 0) {
		/* The run's own RAM: mmap'ed, pages cost only once touched. */
		struct guest_mem gm;
		struct boot_request req = { .protocol = proto, .cmdline = "console=ttyS0" };
		struct kvm_regs regs;
		struct kvm_sregs sregs;

		memset(&regs, 0, sizeof(regs));
		memset(&sregs, 0, sizeof(sregs));
		if (guest_mem_init(&gm, FUZZ_KERNEL_RAM))
			return;
		if (kernel_image_load(img, &gm) == 0)
			boot_prepare(&gm, img, &req, &regs, &sregs);
		guest_mem_free(&gm);
	}
}

int fuzz_elf(const uint8_t *data, size_t size)
{
	struct kernel_image img;

	if (kernel_image_parse(&img, data, size, "fuzz.elf"))
		return -1;
	use_kernel(&img);
	kernel_image_close(&img);
	return 0;
}

int fuzz_bzimage(const uint8_t *data, size_t size)
{
	struct bzimage_info bz;
	struct kernel_image img;
	const char *path;

	if (!bzimage_detect(data, size)) {
		/* A bare payload: u32 announced size, then the compressed bytes. */
		uint8_t *out;
		size_t expected;

		if (size < 4)
			return -1;
		expected = get_le32(data) % FUZZ_MAX_KERNEL;
		if (decompress(data + 4, size - 4, expected, &out))
			return -1;
		if (kernel_image_parse(&img, out, expected, "fuzz.payload") == 0)
			kernel_image_close(&img);
		free(out);
		return 0;
	}
	if (bzimage_parse(data, size, &bz) == 0 && bz.kernel_size > FUZZ_MAX_KERNEL)
		return -1;
	path = fuzz_as_file(data, size);
	if (!path || kernel_image_open(&img, path))
		return -1;
	use_kernel(&img);
	kernel_image_close(&img);
	return 0;
}

/* ---- symbols ---------------------------------------------------------- */

void fuzz_use_symtab(const struct symtab *tab)
{
	char buf[128];
	uint64_t off;

	for (size_t i = 0; i < tab->nr && i < 64; i++) {
		symtab_lookup(tab, tab->syms[i].addr + 1, &off);
		symtab_format(tab, tab->syms[i].addr, buf, sizeof(buf));
		symtab_find(tab, tab->syms[i].name);
	}
	symtab_lookup(tab, 0, &off);
	symtab_lookup(tab, UINT64_MAX, &off);
}

int fuzz_system_map(const uint8_t *data, size_t size)
{
	struct symbols syms;
	const char *path = fuzz_as_file(data, size);

	if (!path || symbols_from_system_map(&syms, path))
		return -1;
	fuzz_use_symtab(&syms.tab);
	symbols_free(&syms);
	return 0;
}

int fuzz_kallsyms(const uint8_t *data, size_t size)
{
	int ret = -1;

	for (unsigned ptr = 8; ptr >= 4; ptr -= 4) {
		struct symbols syms;
		struct kallsyms_info info;

		if (kallsyms_decode(data, size, ptr, &syms, &info))
			continue;
		fuzz_use_symtab(&syms.tab);
		symbols_free(&syms);
		ret = 0;
	}
	return ret;
}
