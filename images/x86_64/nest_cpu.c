/* SPDX-License-Identifier: MIT */
/*
 * nest=<case>, the CPU side (common/nest.h): an IDT with a #PF handler,
 * and pages made not-present on demand. The boot page tables map 2 MiB
 * pages; the first page armed in a 2 MiB page splits it into 4 KiB pages
 * (the same mapping), so one 4 KiB page can be taken away alone.
 *
 * Built without -pg: nothing here may record, or the recording the fault
 * interrupts would not be the one the case chose.
 */
#include <stdint.h>

#include "layout.h"
#include "machine.h"
#include "nest.h"
#include "print.h"

#define PTE_P 0x001ull
#define PTE_W 0x002ull
#define PTE_PS 0x080ull
#define PTE_ADDR 0x000ffffffffff000ull
#define PT_ENTRIES 512
#define PAGE 4096ull
#define VEC_PF 14
#define MAX_SPLITS 4

struct idt_gate {
	uint16_t off0, sel;
	uint8_t ist, type;
	uint16_t off1;
	uint32_t off2, zero;
} __attribute__((packed));

void nest_pf_entry(void);
void nest_on_page_fault(uint64_t addr, uint64_t rip);

static struct idt_gate idt[VEC_PF + 1] __attribute__((aligned(16)));
static uint64_t split_tables[MAX_SPLITS][PT_ENTRIES] __attribute__((aligned(PAGE)));
static unsigned nr_splits;
static void (*fault_hook)(void);
static volatile uint64_t *armed_pte;
static uint64_t armed_page, armed_bit;

volatile uint32_t nest_faults;
volatile uint64_t nest_fault_rip;

/* Page tables and everything else here are in the image, mapped at
 * KERNEL_VIRT_BASE + phys, as is all RAM the tables point at (1 GiB). */
static volatile uint64_t *table_at(uint64_t phys)
{
	return (volatile uint64_t *)(uintptr_t)(phys + KERNEL_VIRT_BASE);
}

static uint64_t read_cr3(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static void invlpg(uint64_t va)
{
	__asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
}

void nest_cpu_init(void (*on_fault)(void))
{
	uint64_t entry = (uint64_t)(uintptr_t)nest_pf_entry;
	uint16_t cs;
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) desc = { sizeof(idt) - 1, (uint64_t)(uintptr_t)idt };

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	idt[VEC_PF] = (struct idt_gate){
		.off0 = (uint16_t)entry,
		.sel = cs,
		.type = 0x8e, /* present, ring 0, 64-bit interrupt gate */
		.off1 = (uint16_t)(entry >> 16),
		.off2 = (uint32_t)(entry >> 32),
	};
	fault_hook = on_fault;
	__asm__ volatile("lidt %0" : : "m"(desc) : "memory");
	/* CR0.WP: a read-only page faults on ring 0's writes too. */
	__asm__ volatile("mov %%cr0, %%rax; or $0x10000, %%rax; mov %%rax, %%cr0" : : : "rax");
}

/* The page-table entry mapping va as a 4 KiB page, splitting the 2 MiB
 * page that maps it first if need be; NULL if it cannot. */
static volatile uint64_t *pte_for(uint64_t va)
{
	volatile uint64_t *l4 = table_at(read_cr3() & PTE_ADDR);
	volatile uint64_t *l3, *l2, *pde;

	if (!(l4[(va >> 39) & 511] & PTE_P))
		return 0;
	l3 = table_at(l4[(va >> 39) & 511] & PTE_ADDR);
	if (!(l3[(va >> 30) & 511] & PTE_P) || (l3[(va >> 30) & 511] & PTE_PS))
		return 0;
	l2 = table_at(l3[(va >> 30) & 511] & PTE_ADDR);
	pde = &l2[(va >> 21) & 511];
	if (!(*pde & PTE_P))
		return 0;
	if (*pde & PTE_PS) {
		uint64_t *pt, base = *pde & 0x000fffffffe00000ull;

		if (nr_splits == MAX_SPLITS)
			return 0;
		pt = split_tables[nr_splits++];
		for (unsigned i = 0; i < PT_ENTRIES; i++)
			pt[i] = (base + i * PAGE) | PTE_W | PTE_P;
		*pde = ((uint64_t)(uintptr_t)pt - KERNEL_VIRT_BASE) | PTE_W | PTE_P;
		/* The 2 MiB translation may be cached: drop them all. */
		__asm__ volatile("mov %0, %%cr3" : : "r"(read_cr3()) : "memory");
	}
	return &table_at(*pde & PTE_ADDR)[(va >> 12) & 511];
}

void nest_arm(const volatile void *addr, enum nest_arm how)
{
	uint64_t va = (uint64_t)(uintptr_t)addr & ~(PAGE - 1);
	volatile uint64_t *pte = pte_for(va);

	if (!pte) {
		print_line("nest: cannot map the page to arm");
		machine_exit(5);
	}
	armed_pte = pte;
	armed_page = va;
	armed_bit = how == NEST_READ_ONLY ? PTE_W : PTE_P;
	*pte &= ~armed_bit;
	invlpg(va);
}

void nest_on_page_fault(uint64_t addr, uint64_t rip)
{
	if (!armed_pte || (addr & ~(PAGE - 1)) != armed_page) {
		print_str("nest: unexpected page fault at=");
		print_hex(addr);
		print_str(" rip=");
		print_hex(rip);
		print_str("\n");
		machine_exit(5);
	}
	*armed_pte |= armed_bit;
	invlpg(armed_page);
	armed_pte = 0;
	nest_faults++;
	nest_fault_rip = rip;
	if (fault_hook)
		fault_hook();
}
