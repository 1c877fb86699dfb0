// SPDX-License-Identifier: MIT
/* Where a PC's RAM goes: around the 32-bit MMIO hole (layout.h). */
#include "arch/x86/layout.h"
#include "vmm/mem/guest_mem.h"

const struct guest_ram_layout *arch_guest_ram_layout(void)
{
	static const struct guest_ram_layout pc = {
		.min_size = LAYOUT_MIN_RAM,
		.hole_start = LAYOUT_MMIO_HOLE_START,
		.hole_end = LAYOUT_MMIO_HOLE_END,
	};

	return &pc;
}
