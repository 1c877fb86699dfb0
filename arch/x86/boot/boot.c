/* SPDX-License-Identifier: MIT */
#include "arch/x86/boot/boot.h"

#include <elf.h>
#include <string.h>

#include "arch/x86/boot/acpi.h"
#include "arch/x86/boot/linux64.h"
#include "arch/x86/boot/pvh.h"
#include "arch/x86/boot_cpu.h"
#include "arch/x86/boot_paging.h"
#include "arch/x86/layout.h"
#include "vmm/util/error.h"

static const char *const names[] = {
	[BOOT_AUTO] = "auto",
	[BOOT_PVH] = "pvh",
	[BOOT_LINUX64] = "linux64",
};

int boot_protocol_parse(const char *text, enum boot_protocol *protocol)
{
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(text, names[i])) {
			*protocol = (enum boot_protocol)i;
			return 0;
		}
	return et_error("unknown boot protocol '%s' (use auto, pvh or linux64)", text);
}

const char *boot_protocol_name(enum boot_protocol protocol)
{
	return names[protocol];
}

int boot_choose_protocol(const struct kernel_image *img, enum boot_protocol requested,
			 enum boot_protocol *chosen)
{
	bool can_linux64 = img->machine == EM_X86_64 &&
			   kernel_image_phys_in_segment(img, img->entry);

	if (requested == BOOT_PVH && !img->has_pvh)
		return et_error("%s: no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY); build the "
				"kernel with CONFIG_PVH=y or use --boot linux64", img->name);
	if (requested == BOOT_LINUX64 && !can_linux64)
		return et_error("%s: the Linux 64-bit boot protocol needs an x86-64 kernel whose "
				"ELF entry is a loaded physical address", img->name);
	if (requested == BOOT_AUTO) {
		if (!img->has_pvh && !can_linux64)
			return et_error("%s: no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY) and not a "
					"64-bit kernel; cannot boot it", img->name);
		requested = img->has_pvh ? BOOT_PVH : BOOT_LINUX64;
	}
	*chosen = requested;
	return 0;
}

/* arch/x86/include/asm/setup.h: boot_command_line's size, NUL included. */
#define X86_LINUX_COMMAND_LINE_SIZE 2048

size_t boot_cmdline_max(const struct kernel_image *img, const char **source)
{
	size_t max = LAYOUT_CMDLINE_MAX - 1;

	*source = "the VMM's room for it";
	if (img->from_bzimage) {
		if (img->bzimage.cmdline_size < max) {
			max = img->bzimage.cmdline_size;
			*source = "its boot protocol's cmdline_size";
		}
	} else if (img->is_linux) {
		max = X86_LINUX_COMMAND_LINE_SIZE - 1;
		*source = "x86 Linux's COMMAND_LINE_SIZE";
	}
	return max;
}

int boot_prepare(const struct guest_mem *gm, const struct kernel_image *img,
		 const struct boot_request *req, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	if (req->protocol == BOOT_PVH) {
		struct pvh_boot_info info = { req->cmdline, req->initrd_paddr, req->initrd_size,
					      req->acpi_rsdp };

		if (pvh_write_start_info(gm, &info))
			return -1;
		return boot_cpu_setup_pvh(gm, img->pvh_entry, LAYOUT_PVH_START_INFO, regs, sregs);
	} else {
		struct linux64_boot_info info = { req->cmdline, req->initrd_paddr,
						  req->initrd_size, req->acpi_rsdp };
		uint64_t cr3;

		if (linux64_write_boot_params(gm, img, &info))
			return -1;
		cr3 = boot_paging_identity_4g(gm);
		if (!cr3)
			return et_error("no RAM for the boot page tables");
		return boot_cpu_setup_long64(gm, img->entry, LAYOUT_ZERO_PAGE, cr3, regs, sregs);
	}
}

uint64_t boot_write_firmware_tables(const struct guest_mem *gm, unsigned nr_cpus)
{
	return acpi_write_tables_cpus(gm, nr_cpus);
}
