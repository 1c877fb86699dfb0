/* SPDX-License-Identifier: MIT */
#include "arch/x86/boot/pvh.h"

#include <string.h>

#include "arch/x86/layout.h"
#include "vmm/util/error.h"

_Static_assert(LAYOUT_PVH_START_INFO + sizeof(struct hvm_start_info) <= LAYOUT_PVH_MODLIST,
	       "start_info runs into the module list");

int pvh_write_start_info(const struct guest_mem *gm, const struct pvh_boot_info *info)
{
	struct memmap_entry entries[LAYOUT_PVH_MEMMAP_MAX];
	struct hvm_memmap_table_entry map[LAYOUT_PVH_MEMMAP_MAX];
	struct hvm_start_info si = {
		.magic = HVM_START_MAGIC,
		.version = HVM_START_VERSION,
	};
	size_t cmdline_len = info->cmdline ? strlen(info->cmdline) : 0;

	if (cmdline_len >= LAYOUT_CMDLINE_MAX)
		return et_error("kernel command line is %zu bytes; the limit is %d",
				cmdline_len, LAYOUT_CMDLINE_MAX - 1);
	/* Always pass a command line, even an empty one: kernels read it. */
	if (guest_mem_write(gm, LAYOUT_CMDLINE, cmdline_len ? info->cmdline : "",
			    cmdline_len + 1))
		return -1;
	si.cmdline_paddr = LAYOUT_CMDLINE;
	si.rsdp_paddr = info->rsdp_paddr;

	si.memmap_entries = memmap_build(gm, entries, LAYOUT_PVH_MEMMAP_MAX);
	for (unsigned i = 0; i < si.memmap_entries; i++)
		map[i] = (struct hvm_memmap_table_entry){ entries[i].addr, entries[i].size,
							  entries[i].type, 0 };
	si.memmap_paddr = LAYOUT_PVH_MEMMAP;
	if (guest_mem_write(gm, LAYOUT_PVH_MEMMAP, map, si.memmap_entries * sizeof(map[0])))
		return -1;

	if (info->initrd_size) {
		struct hvm_modlist_entry mod = {
			.paddr = info->initrd_paddr,
			.size = info->initrd_size,
		};

		if (guest_mem_write(gm, LAYOUT_PVH_MODLIST, &mod, sizeof(mod)))
			return -1;
		si.nr_modules = 1;
		si.modlist_paddr = LAYOUT_PVH_MODLIST;
	}
	return guest_mem_write(gm, LAYOUT_PVH_START_INFO, &si, sizeof(si));
}
