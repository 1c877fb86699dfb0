/* SPDX-License-Identifier: MIT */
#include "arch/x86/boot_paging.h"

#include "arch/x86/layout.h"

#define ENTRIES 512
#define PAGE_2M (2ull << 20)

uint64_t boot_paging_identity_4g(const struct guest_mem *gm)
{
	uint64_t *pml4 = guest_mem_ptr(gm, LAYOUT_BOOT_PML4, 4096);
	uint64_t *pdpt = guest_mem_ptr(gm, LAYOUT_BOOT_PDPT, 4096);
	uint64_t *pd = guest_mem_ptr(gm, LAYOUT_BOOT_PD, 4096ull * LAYOUT_BOOT_PD_COUNT);
	const uint64_t table = X86_PTE_PRESENT | X86_PTE_WRITE;

	if (!pml4 || !pdpt || !pd)
		return 0;
	for (unsigned i = 0; i < ENTRIES; i++)
		pml4[i] = pdpt[i] = 0;
	pml4[0] = LAYOUT_BOOT_PDPT | table;
	for (unsigned i = 0; i < LAYOUT_BOOT_PD_COUNT; i++)
		pdpt[i] = (LAYOUT_BOOT_PD + 4096ull * i) | table;
	/* The MMIO hole is mapped too: the kernel may touch the APIC early. */
	for (unsigned i = 0; i < ENTRIES * LAYOUT_BOOT_PD_COUNT; i++)
		pd[i] = (i * PAGE_2M) | table | X86_PTE_LARGE;
	return LAYOUT_BOOT_PML4;
}
