/* SPDX-License-Identifier: MIT */
/*
 * smp: the test kernel brings up its application processors the way Linux
 * does — CPUs from the ACPI MADT, one at a time: INIT, SIPI, SIPI through
 * the local APIC's ICR to a real-mode start page (smp_boot.S), wait for the
 * AP to call in — and every CPU runs a call tree whose size depends on its
 * index, so a trace can be checked CPU by CPU. With smp=ring the trees
 * run after a per-CPU guestlib handoff, each CPU recording into its own
 * ring (smp_ring.c).
 */
#include "smp.h"

#include <stdint.h>

#include "boot.h"
#include "compiler.h"
#include "print.h"
#include "smp_layout.h"
#include "smp_ring.h"

#define LAPIC_BASE 0xfee00000ul /* identity-mapped (entry.S maps 4 GiB) */
#define LAPIC_ID 0x20
#define LAPIC_SVR 0xf0
#define LAPIC_ICR_LO 0x300
#define LAPIC_ICR_HI 0x310
#define LAPIC_SVR_ENABLE 0x100
#define ICR_INIT 0x00004500	/* INIT, level assert */
#define ICR_SIPI 0x00004600	/* start-up, vector in the low byte */
#define ICR_BUSY 0x00001000	/* delivery status: pending */
#define ACPI_SCAN_START 0xe0000ul
#define ACPI_SCAN_END 0x100000ul
/* Spins before giving up on an AP: seconds on a KVM that emulates the
 * guest's instructions, nothing on one that runs them. */
#define SPIN_LIMIT 50000000u

extern const uint8_t smp_ap_start[], smp_ap_end[];
extern uint8_t smp_ap_gdt_desc[], smp_ap_cr3[], smp_ap_stack[], smp_ap_entry[], smp_ap_gs_base[];

static uint8_t apic_ids[SMP_MAX_CPUS];
static unsigned nr_cpus;
static volatile uint32_t ap_index;	/* the AP being started: its index */
static volatile uint32_t called_in[SMP_MAX_CPUS];
static volatile uint32_t finished[SMP_MAX_CPUS];
static uint32_t root_calls[SMP_MAX_CPUS], leaf_calls[SMP_MAX_CPUS];
static uint8_t ap_stacks[SMP_MAX_CPUS][8192] __attribute__((aligned(16)));

static uint32_t lapic_read(unsigned reg)
{
	return *(volatile uint32_t *)(LAPIC_BASE + reg);
}

static void lapic_write(unsigned reg, uint32_t v)
{
	*(volatile uint32_t *)(LAPIC_BASE + reg) = v;
}

/* Each CPU's own tree: pc_leaf SMP_LEAVES * (cpu + 1) times. */
__traced_fn static uint32_t pc_leaf(uint32_t cpu, uint32_t i)
{
	leaf_calls[cpu]++;
	return cpu * 7 + i;
}

__traced_fn static uint32_t pc_root(uint32_t cpu)
{
	uint32_t sum = 0;

	root_calls[cpu]++;
	for (uint32_t i = 0; i < SMP_LEAVES * (cpu + 1); i++)
		sum += pc_leaf(cpu, i);
	return sum;
}

/* CPU cpu's tree, repeat=N times (benchmarks: N times the counts). */
static void run_tree(uint32_t cpu)
{
	for (uint32_t r = 0; r < boot_options()->repeat; r++)
		pc_root(cpu);
}

/*
 * smp=race: every CPU calls the same functions at the same time, so that
 * several hit one site's breakpoint together (the VMM must resume those
 * whose exit waited while another removed it, --oneshot). Each counts its
 * calls per CPU.
 */
#define RACE_FNS 16
static uint32_t race_calls[SMP_MAX_CPUS];
static volatile uint32_t race_arrived, race_go;

#define RACE_FN(n)                                                                          \
	__traced_fn static void race_fn_##n(uint32_t cpu)                                   \
	{                                                                                   \
		__atomic_fetch_add(&race_calls[cpu], 1, __ATOMIC_RELAXED);                  \
	}
RACE_FN(0) RACE_FN(1) RACE_FN(2) RACE_FN(3) RACE_FN(4) RACE_FN(5) RACE_FN(6) RACE_FN(7)
RACE_FN(8) RACE_FN(9) RACE_FN(10) RACE_FN(11) RACE_FN(12) RACE_FN(13) RACE_FN(14) RACE_FN(15)

static void (*const race_fns[RACE_FNS])(uint32_t) = {
	race_fn_0,  race_fn_1,	race_fn_2,  race_fn_3,	race_fn_4,  race_fn_5,
	race_fn_6,  race_fn_7,	race_fn_8,  race_fn_9,	race_fn_10, race_fn_11,
	race_fn_12, race_fn_13, race_fn_14, race_fn_15,
};

/*
 * Then one traced call open on every CPU at once, entered by CPU 0 first
 * and left by it first (the others wait inside until it has returned): a
 * --graph tracer must end CPU 0's frame with the others' frames, pushed
 * after it, still open on their own CPUs.
 */
static volatile uint32_t race_racers, nest_inside, nest_cpu0_out;

static void spin_until(volatile uint32_t *v, uint32_t at_least)
{
	for (unsigned i = 0; i < SPIN_LIMIT && __atomic_load_n(v, __ATOMIC_ACQUIRE) < at_least; i++)
		__asm__ volatile("pause");
}

__traced_fn static void race_nest(uint32_t cpu)
{
	__atomic_fetch_add(&nest_inside, 1, __ATOMIC_ACQ_REL);
	if (cpu == 0)
		spin_until(&nest_inside, race_racers);
	else
		spin_until(&nest_cpu0_out, 1);
}

static void race(uint32_t cpu)
{
	for (unsigned i = 0; i < RACE_FNS; i++)
		race_fns[i](cpu);
	if (cpu != 0)
		spin_until(&nest_inside, 1); /* CPU 0 in first */
	race_nest(cpu);
	if (cpu == 0)
		__atomic_store_n(&nest_cpu0_out, 1, __ATOMIC_RELEASE);
}

/* An AP: wait with the others until the BSP says go. */
static void race_as_ap(uint32_t cpu)
{
	__atomic_fetch_add(&race_arrived, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&race_go, __ATOMIC_ACQUIRE))
		__asm__ volatile("pause");
	race(cpu);
}

/* The BSP: once the started APs wait, let them all go and go too. */
static void race_as_bsp(uint32_t cpu, unsigned aps)
{
	for (unsigned i = 0; i < SPIN_LIMIT && __atomic_load_n(&race_arrived, __ATOMIC_ACQUIRE) < aps;
	     i++)
		__asm__ volatile("pause");
	race_racers = __atomic_load_n(&race_arrived, __ATOMIC_ACQUIRE) + 1;
	__atomic_store_n(&race_go, 1, __ATOMIC_RELEASE);
	race(cpu);
}

/* Where smp_boot.S jumps, on the AP's own stack. */
__noreturn void smp_ap_main(void);
__noreturn void smp_ap_main(void)
{
	uint32_t me = ap_index;

	called_in[me] = 1;
	run_tree(me);
	if (boot_options()->smp_race)
		race_as_ap(me);
	while (me == 1 && boot_options()->smp_busy)
		pc_leaf(me, 0);
	if (me == 1 && boot_options()->smp_crash) {
		/* No IDT: the invalid opcode becomes a triple fault. */
		static const struct __attribute__((packed)) {
			uint16_t limit;
			uint64_t base;
		} no_idt = { 0, 0 };

		__asm__ volatile("lidt %0; ud2" : : "m"(no_idt));
	}
	__atomic_store_n(&finished[me], 1, __ATOMIC_RELEASE);
	for (;;)
		__asm__ volatile("cli; hlt");
}

static uint8_t sum_bytes(const uint8_t *p, uint32_t len)
{
	uint8_t s = 0;

	for (uint32_t i = 0; i < len; i++)
		s = (uint8_t)(s + p[i]);
	return s;
}

static int same4(const uint8_t *p, const char *s)
{
	return p[0] == s[0] && p[1] == s[1] && p[2] == s[2] && p[3] == s[3];
}

static uint32_t acpi_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t acpi_get64(const uint8_t *p)
{
	return acpi_get32(p) | (uint64_t)acpi_get32(p + 4) << 32;
}

/* The enabled local APICs the MADT lists, in its order (the BSP first on
 * every PC firmware); none when there is no MADT. */
static void find_cpus(void)
{
	const uint8_t *rsdp = 0, *xsdt, *madt = 0;

	for (uintptr_t a = ACPI_SCAN_START; a < ACPI_SCAN_END && !rsdp; a += 16) {
		const uint8_t *p = (const uint8_t *)a;

		if (same4(p, "RSD ") && same4(p + 4, "PTR ") && !sum_bytes(p, 20) && p[15] >= 2)
			rsdp = p;
	}
	if (!rsdp)
		return;
	xsdt = (const uint8_t *)(uintptr_t)acpi_get64(rsdp + 24);
	for (uint32_t off = 36; off + 8 <= acpi_get32(xsdt + 4); off += 8) {
		const uint8_t *t = (const uint8_t *)(uintptr_t)acpi_get64(xsdt + off);

		if (same4(t, "APIC") && !sum_bytes(t, acpi_get32(t + 4)))
			madt = t;
	}
	if (!madt)
		return;
	for (uint32_t off = 44; off + 2 <= acpi_get32(madt + 4) && madt[off + 1];
	     off += madt[off + 1])
		if (madt[off] == 0 && (acpi_get32(madt + off + 4) & 1) && nr_cpus < SMP_MAX_CPUS)
			apic_ids[nr_cpus++] = madt[off + 3];
}

static void send_ipi(uint8_t apic_id, uint32_t icr)
{
	lapic_write(LAPIC_ICR_HI, (uint32_t)apic_id << 24);
	lapic_write(LAPIC_ICR_LO, icr);
	for (unsigned i = 0; i < SPIN_LIMIT && (lapic_read(LAPIC_ICR_LO) & ICR_BUSY); i++)
		__asm__ volatile("pause");
}

static int wait_for(volatile uint32_t *flag)
{
	for (unsigned i = 0; i < SPIN_LIMIT; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
			return 1;
		__asm__ volatile("pause");
	}
	return 0;
}

/* The start page: the code, then the BSP's GDT, page tables, the AP's
 * stack and entry in its data. */
static void prepare_start_page(void)
{
	volatile uint8_t *page = (volatile uint8_t *)SMP_AP_PA;
	struct __attribute__((packed)) {
		uint16_t limit;
		uint64_t base;
	} gdt;
	uint64_t cr3;

	for (long i = 0; i < smp_ap_end - smp_ap_start; i++)
		page[i] = smp_ap_start[i];
	__asm__ volatile("sgdt %0" : "=m"(gdt));
	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	*(volatile uint16_t *)(page + (smp_ap_gdt_desc - smp_ap_start)) = gdt.limit;
	*(volatile uint32_t *)(page + (smp_ap_gdt_desc - smp_ap_start) + 2) = (uint32_t)gdt.base;
	*(volatile uint64_t *)(page + (smp_ap_cr3 - smp_ap_start)) = cr3;
	*(volatile uint64_t *)(page + (smp_ap_entry - smp_ap_start)) = (uintptr_t)smp_ap_main;
}

static void say(const char *a, uint32_t x, const char *b, uint32_t y)
{
	print_str(a);
	print_dec(x);
	print_str(b);
	print_dec(y);
}

void smp_run(void)
{
	unsigned started = 1, self = 0;
	uint8_t me;

	find_cpus();
	if (!nr_cpus)
		apic_ids[nr_cpus++] = (uint8_t)(lapic_read(LAPIC_ID) >> 24);
	me = (uint8_t)(lapic_read(LAPIC_ID) >> 24);
	/* The local APIC sends no IPI while software-disabled (KVM). */
	lapic_write(LAPIC_SVR, lapic_read(LAPIC_SVR) | LAPIC_SVR_ENABLE | 0xff);
	prepare_start_page();
	for (unsigned i = 0; i < nr_cpus; i++)
		if (apic_ids[i] == me)
			self = i;
	/* Before any AP runs: patching the sites needs the others quiet. */
	if (boot_options()->smp_ring && smp_ring_start(nr_cpus, self))
		print_line("smp ring: not started");
	for (unsigned i = 0; i < nr_cpus; i++) {
		if (apic_ids[i] == me) {
			called_in[i] = 1;
			continue;
		}
		ap_index = i;
		*(volatile uint64_t *)(SMP_AP_PA + (smp_ap_stack - smp_ap_start)) =
			(uintptr_t)&ap_stacks[i][sizeof(ap_stacks[i])];
		*(volatile uint64_t *)(SMP_AP_PA + (smp_ap_gs_base - smp_ap_start)) =
			smp_ring_gs_base(i);
		send_ipi(apic_ids[i], ICR_INIT);
		send_ipi(apic_ids[i], ICR_SIPI | (SMP_AP_PA >> 12));
		send_ipi(apic_ids[i], ICR_SIPI | (SMP_AP_PA >> 12));
		if (wait_for(&called_in[i]))
			started++;
		else
			say("smp cpu=", i, " apic=", apic_ids[i]), print_line(" did not call in");
	}
	for (unsigned i = 0; i < nr_cpus; i++)
		if (apic_ids[i] == me) {
			run_tree(i);
			if (boot_options()->smp_race)
				race_as_bsp(i, started - 1);
			finished[i] = 1;
		}
	for (unsigned i = 0; i < nr_cpus; i++) {
		if (called_in[i] && !wait_for(&finished[i]))
			say("smp cpu=", i, " apic=", apic_ids[i]), print_line(" did not finish");
		say("smp cpu=", i, " apic=", apic_ids[i]);
		say(" pc_root=", root_calls[i], " pc_leaf=", leaf_calls[i]);
		print_line("");
		if (boot_options()->smp_race)
			say("smp race cpu=", i, " calls=", race_calls[i]), print_line("");
	}
	say("smp cpus=", nr_cpus, " started=", started);
	print_line("");
	smp_ring_stop((uintptr_t)pc_root, (uintptr_t)pc_leaf);
}
