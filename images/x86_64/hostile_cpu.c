/* SPDX-License-Identifier: MIT */
/*
 * The x86_64 kernel's hostile cases that play with the CPU: page tables
 * (pt-loop, pt-outside) and segment bases (seg-base).
 *
 * hostile=pt-loop and hostile=pt-outside: page tables a VMM's walker must
 * survive. In breakpoint mode the VMM translates rip and reads the return
 * address at rsp through the guest's own page tables at every traced call
 * (arch/x86/page_walk.c). A walk cannot go on forever (the depth is fixed
 * by the paging mode) but it can loop back into a table it already read,
 * and it can lead outside guest RAM.
 *
 * The CPU and the VMM's walker follow the same rules, so tables the guest
 * really runs on translate the same for both. What tests the walker is
 * (a) a mapping the guest does run on that loops (pt-loop), and (b)
 * mappings only the VMM walks (pt-outside): the guest points rsp at them
 * and reaches a traced site with a jmp, so the CPU never touches that
 * stack, but the VMM reads the return address there. (On a host whose TLB
 * kept stale entries the guest could run on such tables too; under shadow
 * paging, as on nested kvm-pvm, it cannot, so that is not a test.)
 *
 * Built without -pg, like hostile.c.
 */
#include <stdint.h>

#include <arch/x86/layout.h>

#include "calltree.h"
#include "hostile.h"
#include "layout.h"
#include "print.h"

#define PTE_P 0x001ull
#define PTE_W 0x002ull
#define PTE_A 0x020ull
#define PTE_PS 0x080ull
#define PTE_ADDR 0x000ffffffffff000ull
#define PT_ENTRIES 512
#define PAGE 4096

/* Slots of the top-level table that this kernel does not use (it maps
 * physical memory at slot 0 and itself at slot 511). */
#define LOOP_SLOT 300ull
#define STACK_SLOT 301ull	/* to 304: four stack pages */
#define STACK_PAGES 4
#define ABSENT_SLOT 400ull
#define BAD_TABLE_SLOT 401ull
#define BAD_LEAF_SLOT 402ull

void hostile_on_stack(void (*fn)(void), uint64_t stack_top);
void hostile_load_ss(uint16_t selector);
void hostile_load_cs(uint16_t selector);
void hostile_pt_jump(uint64_t cr3, uint64_t rsp);
void hostile_pt_target(void);

#define TABLE __attribute__((aligned(PAGE)))
static uint64_t pml4[PT_ENTRIES] TABLE;
static uint64_t pdpt_bad[PT_ENTRIES] TABLE;
static uint64_t pdpt_leaf[PT_ENTRIES] TABLE;
static uint64_t pd_leaf[PT_ENTRIES] TABLE;
static uint64_t pt_leaf[PT_ENTRIES] TABLE;
static uint64_t pdpt_high[PT_ENTRIES] TABLE;
static uint64_t pd_wrap[PT_ENTRIES] TABLE;
static uint64_t pt_wrap[PT_ENTRIES] TABLE;
static uint8_t wrap_page[PAGE] TABLE;
static uint8_t loop_stack[STACK_PAGES * PAGE] TABLE;

/* Everything here is in the image, mapped at KERNEL_VIRT_BASE + phys. */
static uint64_t pa(const volatile void *v)
{
	return (uint64_t)(uintptr_t)v - KERNEL_VIRT_BASE;
}

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

static void write_cr3(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr3" : : "r"(v) : "memory");
}

/* The canonical address with these four table indices. */
static uint64_t va(uint64_t l4, uint64_t l3, uint64_t l2, uint64_t l1)
{
	uint64_t v = l4 << 39 | l3 << 30 | l2 << 21 | l1 << 12;

	return (uint64_t)((int64_t)(v << 16) >> 16);
}

/* Our own top-level table: the running one's entries, then changes. */
static void copy_top_table(void)
{
	volatile uint64_t *cur = table_at(read_cr3() & PTE_ADDR);

	for (unsigned i = 0; i < PT_ENTRIES; i++)
		pml4[i] = cur[i];
}

static void loop_phase(void)
{
	calltree_run("loop");
}

/*
 * pt-loop: slot LOOP_SLOT of the top-level table points back at the table
 * itself, so an address whose top three indices are LOOP_SLOT walks the
 * same page three times and then uses a top-level entry as its page-table
 * entry. Slots STACK_SLOT.. point at four pages of loop_stack; the call
 * tree runs with its stack there. The CPU walks the loop on every stack
 * access, and in breakpoint mode the VMM walks it at every call to read the
 * parent: the trace must hold the call tree with exact parents.
 */
void hostile_pt_loop(void)
{
	uint64_t old = read_cr3();
	uint64_t stack = va(LOOP_SLOT, LOOP_SLOT, LOOP_SLOT, STACK_SLOT);
	volatile uint64_t *probe = (volatile uint64_t *)(uintptr_t)stack;

	calltree_run("early");
	copy_top_table();
	pml4[LOOP_SLOT] = pa(pml4) | PTE_W | PTE_P;
	for (unsigned k = 0; k < STACK_PAGES; k++)
		pml4[STACK_SLOT + k] = pa(loop_stack + k * PAGE) | PTE_W | PTE_P;
	write_cr3(pa(pml4));
	*probe = 0x1234567890abcdefull;
	if (*(volatile uint64_t *)loop_stack != 0x1234567890abcdefull) {
		write_cr3(old);
		hostile_line("the looped mapping does not reach the stack");
		return;
	}
	hostile_hex_line("stack", stack);
	hostile_on_stack(loop_phase, stack + STACK_PAGES * PAGE);
	write_cr3(old);
	calltree_run("after");
}

struct pt_case {
	const char *name;
	uint64_t rsp;
	uint64_t expect; /* the parent the VMM must report: 0 when unreadable */
};

/*
 * pt-outside: one jump to hostile_pt_target per case, with rsp at an
 * address only the VMM's walker will visit:
 *   absent        top-level entry not present
 *   table-outside a PDPT entry pointing at a "page directory" at 4 TiB
 *   pte-outside   a 4 KiB page at 32 GiB
 *   pde-outside   a 2 MiB page at 2 GiB
 *   pdpte-outside a 1 GiB page at 1 GiB
 *   lapic         a 4 KiB page at the local APIC (LAYOUT_LOCAL_APIC, MMIO)
 *   noncanonical  0x0000800000000000
 *   wrap          0xfffffffffffffffc: the 8-byte read runs past 2^64 into
 *                 address 0; both ends mapped to RAM, so the VMM reads
 *                 4 bytes of each (0x55667788 from the last page, 0x11223344
 *                 from physical 0)
 *   loop-leaf     every index LOOP_SLOT but the last, which is ABSENT_SLOT:
 *                 loops three times, then finds nothing present
 *   loop-all      every index LOOP_SLOT: the "stack" is the top-level table
 *                 itself, and the parent read is its entry LOOP_SLOT
 * In trampoline mode the site is a call, which would push on that stack:
 * the case says so and skips the jumps.
 */
void hostile_pt_outside(void)
{
	const volatile uint8_t *site = (const volatile uint8_t *)hostile_pt_target;
	volatile uint64_t *high;
	struct pt_case cases[] = {
		{ "absent", va(ABSENT_SLOT, 0, 0, 0) + 0x100, 0 },
		{ "table-outside", va(BAD_TABLE_SLOT, 0, 0, 0) + 0x100, 0 },
		{ "pte-outside", va(BAD_LEAF_SLOT, 0, 0, 0) + 0x100, 0 },
		{ "pde-outside", va(BAD_LEAF_SLOT, 0, 1, 0) + 0x100, 0 },
		{ "pdpte-outside", va(BAD_LEAF_SLOT, 1, 0, 0) + 0x100, 0 },
		{ "lapic", va(BAD_LEAF_SLOT, 0, 0, 1) + 0x30, 0 },
		{ "noncanonical", 0x0000800000000000ull, 0 },
		{ "wrap", 0xfffffffffffffffcull, 0x1122334455667788ull },
		{ "loop-leaf", va(LOOP_SLOT, LOOP_SLOT, LOOP_SLOT, ABSENT_SLOT) + 0x100, 0 },
		{ "loop-all", va(LOOP_SLOT, LOOP_SLOT, LOOP_SLOT, LOOP_SLOT) + LOOP_SLOT * 8, 0 },
	};
	uint64_t old = read_cr3();

	calltree_run("early");
	if (site[0] == 0xe8) {
		hostile_line("skipped: the site calls a trampoline, which would push on the stack");
		calltree_run("after");
		return;
	}
	copy_top_table();
	pml4[ABSENT_SLOT] = 0;
	pml4[BAD_TABLE_SLOT] = pa(pdpt_bad) | PTE_W | PTE_P;
	pdpt_bad[0] = 0x40000000000ull | PTE_W | PTE_P;
	pml4[BAD_LEAF_SLOT] = pa(pdpt_leaf) | PTE_W | PTE_P;
	pdpt_leaf[0] = pa(pd_leaf) | PTE_W | PTE_P;
	pdpt_leaf[1] = 0x40000000ull | PTE_PS | PTE_W | PTE_P;
	pd_leaf[0] = pa(pt_leaf) | PTE_W | PTE_P;
	pd_leaf[1] = 0x80000000ull | PTE_PS | PTE_W | PTE_P;
	pt_leaf[0] = 0x800000000ull | PTE_W | PTE_P;
	pt_leaf[1] = LAYOUT_LOCAL_APIC | PTE_W | PTE_P;
	/* The kernel's own slot, with the top 4 KiB of the address space
	 * added (its 1 GiB stays where it was). */
	high = table_at(pml4[PT_ENTRIES - 1] & PTE_ADDR);
	for (unsigned i = 0; i < PT_ENTRIES; i++)
		pdpt_high[i] = high[i];
	pdpt_high[PT_ENTRIES - 1] = pa(pd_wrap) | PTE_W | PTE_P;
	pd_wrap[PT_ENTRIES - 1] = pa(pt_wrap) | PTE_W | PTE_P;
	pt_wrap[PT_ENTRIES - 1] = pa(wrap_page) | PTE_W | PTE_P;
	pml4[PT_ENTRIES - 1] = pa(pdpt_high) | PTE_W | PTE_P;
	*(volatile uint32_t *)(wrap_page + PAGE - 4) = 0x55667788u;
	*table_at(0) = 0x11223344u; /* physical 0, reached at address 0 */
	/* The accessed bit set already, so the value read is the one below. */
	pml4[LOOP_SLOT] = pa(pml4) | PTE_A | PTE_W | PTE_P;
	cases[ARRAY_SIZE(cases) - 1].expect = pml4[LOOP_SLOT];

	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		print_str("hostile: pt-outside case=");
		print_str(cases[i].name);
		print_str(" rsp=");
		print_hex(cases[i].rsp);
		print_str(" expect=");
		print_hex(cases[i].expect);
		print_str("\n");
		hostile_pt_jump(pa(pml4), cases[i].rsp);
	}
	write_cr3(old);
	calltree_run("after");
}

/* ---- seg-base ----------------------------------------------------------- */

#define SEG_BASE 0x100000ull
#define SEG_DATA_IDX 6
#define SEG_CODE_IDX 7
#define BOOT_CODE_SEL 0x08 /* entry.S's GDT */
#define BOOT_DATA_SEL 0x10

struct gdt_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

static uint64_t gdt[8] __attribute__((aligned(16)));

/* A flat 4 GiB descriptor with base SEG_BASE: access byte and flags. */
static uint64_t based_descriptor(uint64_t access, uint64_t flags)
{
	return 0xffffull | (SEG_BASE & 0xffffff) << 16 | access << 40 | 0xfull << 48 |
	       flags << 52 | (SEG_BASE >> 24 & 0xff) << 56;
}

/*
 * hostile=seg-base: in 64-bit mode the CPU ignores the bases of CS and SS
 * (they are treated as 0) but still loads them from the descriptor, and
 * KVM reports what was loaded. The call tree runs once with SS, once with
 * CS from descriptors whose base is 1 MiB: a VMM that adds those bases to
 * rsp or rip reads the wrong return address, or misses its own int3 (which
 * then reaches the guest as #BP: a triple fault here).
 */
void hostile_seg_base(void)
{
	struct gdt_ptr old, ours;
	unsigned n;

	calltree_run("early");
	__asm__ volatile("sgdt %0" : "=m"(old));
	n = (old.limit + 1u) / 8;
	if (n > SEG_DATA_IDX)
		n = SEG_DATA_IDX;
	for (unsigned i = 0; i < n; i++)
		gdt[i] = ((volatile uint64_t *)(uintptr_t)old.base)[i];
	gdt[SEG_DATA_IDX] = based_descriptor(0x92, 0xc);	/* data, 32-bit, 4 KiB granules */
	gdt[SEG_CODE_IDX] = based_descriptor(0x9a, 0xa);	/* code, 64-bit (L), 4 KiB granules */
	ours.limit = sizeof(gdt) - 1;
	ours.base = (uint64_t)(uintptr_t)gdt;
	__asm__ volatile("lgdt %0" : : "m"(ours) : "memory");

	hostile_load_ss(SEG_DATA_IDX * 8);
	hostile_hex_line("ss base", SEG_BASE);
	calltree_run("ss");
	hostile_load_ss(BOOT_DATA_SEL);

	hostile_load_cs(SEG_CODE_IDX * 8);
	hostile_hex_line("cs base", SEG_BASE);
	calltree_run("cs");
	hostile_load_cs(BOOT_CODE_SEL);

	__asm__ volatile("lgdt %0" : : "m"(old) : "memory");
	calltree_run("after");
}
