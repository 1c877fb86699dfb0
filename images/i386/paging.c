/* SPDX-License-Identifier: MIT */
#include "paging.h"

#include <stdint.h>

#define PDE_PRESENT 0x001u
#define PDE_WRITE 0x002u
#define PDE_4M 0x080u		/* PS: the entry maps a 4 MiB page (needs CR4.PSE) */
#define PAGE_4M_SHIFT 22

#define CR0_PG 0x80000000u
#define CR4_PSE 0x00000010u

#define VEC_GP 13
#define GATE_INTR32 0x8e	/* present, DPL 0, 32-bit interrupt gate */

struct idt_gate {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t zero;
	uint8_t type;
	uint16_t offset_hi;
} __attribute__((packed));

struct idt_desc {
	uint16_t limit;
	uint32_t base;
} __attribute__((packed));

/* In paging_switch.S. */
int paging_switch_on(uint32_t cr0);
void paging_gp_trap(void);

static uint32_t page_dir[1024] __attribute__((aligned(4096)));
/* Gates 0..VEC_GP; only #GP is present, so any other fault still ends in
 * a triple fault, as it would with no IDT. */
static struct idt_gate gp_idt[VEC_GP + 1];

static void load_idt(const void *base, uint16_t limit)
{
	const struct idt_desc desc = { limit, (uint32_t)(uintptr_t)base };

	__asm__ volatile("lidt %0" : : "m"(desc) : "memory");
}

/* Sets CR0.PG, catching the #GP of a CPU that does not do 32-bit paging. */
static bool switch_on(uint32_t cr0)
{
	uint32_t trap = (uint32_t)(uintptr_t)paging_gp_trap;
	uint16_t cs;
	bool ok;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	gp_idt[VEC_GP] = (struct idt_gate){
		.offset_lo = (uint16_t)trap,
		.selector = cs,
		.type = GATE_INTR32,
		.offset_hi = (uint16_t)(trap >> 16),
	};
	load_idt(gp_idt, sizeof(gp_idt) - 1);
	ok = paging_switch_on(cr0);
	/* Back to no IDT: crash=triple and real faults must stay fatal. */
	load_idt(0, 0);
	return ok;
}

bool paging_enable(void)
{
	const uint32_t nr_pages = PAGING_MAPPED_SIZE >> PAGE_4M_SHIFT;
	const uint32_t alias_first = KERNEL_ALIAS_BASE >> PAGE_4M_SHIFT;
	uint32_t cr0, cr4;

	/* Clear every slot, so the table does not rely on .bss being zeroed. */
	for (uint32_t i = 0; i < 1024; i++)
		page_dir[i] = 0;
	for (uint32_t i = 0; i < nr_pages; i++) {
		uint32_t pde = (i << PAGE_4M_SHIFT) | PDE_4M | PDE_WRITE | PDE_PRESENT;

		page_dir[i] = pde;
		page_dir[alias_first + i] = pde;
	}

	__asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
	__asm__ volatile("mov %0, %%cr4" : : "r"(cr4 | CR4_PSE));
	/* Paging is off, so the table's link-time address is its physical one. */
	__asm__ volatile("mov %0, %%cr3" : : "r"(page_dir) : "memory");
	__asm__ volatile("mov %%cr0, %0" : "=r"(cr0));
	return switch_on(cr0 | CR0_PG);
}
