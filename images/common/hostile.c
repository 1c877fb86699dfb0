/* SPDX-License-Identifier: MIT */
/*
 * hostile=<case> (see hostile.h): a guest that abuses earlytrace's guest
 * interfaces. Built without -pg (img_cc64_notrace): the misbehaviour itself
 * makes no traced calls, so a test tracing ct_* sees exactly the call
 * tree's calls, and a case that scribbles on the trampolines' batch does
 * not run through a trampoline before it means to.
 *
 * Every case runs phases of the call tree ("calltree phase=..." lines)
 * around its misbehaviour, so the tests can count every call the VMM must
 * have recorded. The cases assume --mem 32M (HOSTILE_RAM_SIZE).
 */
#include "hostile.h"

#include <stdbool.h>

#include <arch/x86/layout.h>
#include <earlytrace/guestlib.h>

#include "boot.h"
#include "calltree.h"
#include "io.h"
#include "print.h"

/* common/trampoline_area.c: the region a tracing VMM may fill. */
extern unsigned char et_trampoline_area[];
#define TRAMP_AREA_SIZE (64u << 10)

#define OP_CALL 0xe8
#define RING_BYTES (256u << 10)

static int64_t phys_offset;
static const char *case_name;

/* A ring for the cases that do hand over (in .bss: et_guest_init's one
 * offset maps it). */
static uint8_t ring_buf[RING_BYTES] __attribute__((aligned(64)));

static uint64_t phys_of(const volatile void *virt)
{
	return (uint64_t)(uintptr_t)virt + (uint64_t)phys_offset;
}

/* Guest-physical pa (below 1 GiB) through the kernel's higher-half map. */
static void *virt_of(uint64_t pa)
{
	return (void *)(uintptr_t)(pa - (uint64_t)phys_offset);
}

static void print_sdec(int64_t v)
{
	if (v < 0) {
		print_str("-");
		v = -v;
	}
	print_dec((uint32_t)v);
}

void hostile_line(const char *what)
{
	print_str("hostile: ");
	print_str(case_name);
	print_str(" ");
	print_line(what);
}

void hostile_hex_line(const char *what, uint64_t v)
{
	print_str("hostile: ");
	print_str(case_name);
	print_str(" ");
	print_str(what);
	print_str("=");
	print_hex(v);
	print_str("\n");
}

static void result_line(const char *what, int64_t result)
{
	print_str("hostile: ");
	print_str(case_name);
	print_str(" ");
	print_str(what);
	print_str(" result=");
	print_sdec(result);
	print_str("\n");
}

static void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

/* Makes the CPU fetch code we just changed (one CPU: a serializing
 * instruction is enough, as guestlib's patching does). */
static void sync_core(void)
{
	uint32_t a = 0, b, c = 0, d;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d) : : "memory");
}

static bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* ---- rings the VMM must refuse, or take without harm -------------------- */

static int64_t handoff(uint64_t pa, uint64_t bytes)
{
	return et_hypercall(ET_HC_HANDOFF, pa, bytes);
}

/* A well-formed ring header over buf (magic, version, record size,
 * capacity for `bytes`), written field by field. */
static void ring_header(volatile struct et_ring *r, uint64_t bytes)
{
	r->magic = ET_RING_MAGIC;
	r->abi_version = ET_ABI_VERSION;
	r->record_size = sizeof(struct et_ring_record);
	r->capacity = (uint32_t)((bytes - sizeof(struct et_ring)) / sizeof(struct et_ring_record));
	r->tsc_khz = 0;
	r->head = 0;
	r->lost = 0;
}

/* The guest runs its own tracer on a ring the VMM accepted, and says what
 * it holds. */
static void ring_phase(void *buf, uint64_t bytes)
{
	struct et_trace_info info;
	struct et_ring *r;
	int ret;

	ret = et_trace_start(buf, bytes, 0, &info);
	result_line("handoff", info.handoff_result);
	if (ret) {
		calltree_run("after");
		return;
	}
	calltree_run("ring");
	et_trace_stop(&info);
	r = et_trace_ring();
	print_str("hostile: ");
	print_str(case_name);
	print_str(" ring head=");
	print_dec((uint32_t)r->head);
	print_str(" lost=");
	print_dec((uint32_t)r->lost);
	print_str(" capacity=");
	print_dec(r->capacity);
	print_str(" vmm_events=");
	print_dec((uint32_t)r->vmm_events);
	print_str(" skipped=");
	print_dec(info.skipped);
	print_str("\n");
}

/* Rings in memory that is not guest RAM: past its end, in the MMIO hole
 * (the local APIC page, KVM's TSS pages from arch/x86/layout.h), above
 * 4 GiB, and a valid header in RAM's last 64 bytes whose records run past
 * its end. */
static void case_ring_outside_ram(void)
{
	static const uint64_t at[][2] = {
		{ HOSTILE_RAM_SIZE, 4096 },
		{ 0x40000000, 4096 },
		{ LAYOUT_LOCAL_APIC, 4096 },
		{ LAYOUT_KVM_TSS, 4096 },
		{ 0x100000000ull, 4096 },
		{ HOSTILE_RAM_SIZE - 64, 4096 },
	};

	ring_header(virt_of(HOSTILE_RAM_SIZE - 64), 4096);
	for (unsigned i = 0; i < ARRAY_SIZE(at); i++) {
		int64_t result = handoff(at[i][0], at[i][1]);

		print_str("hostile: ring-outside-ram at=");
		print_hex(at[i][0]);
		print_str(" bytes=");
		print_hex(at[i][1]);
		print_str(" result=");
		print_sdec(result);
		print_str("\n");
	}
	calltree_run("after");
}

/* Absurd sizes, and headers that promise more than the buffer holds. */
static void case_ring_huge(void)
{
	static uint8_t buf[4096] __attribute__((aligned(64)));
	volatile struct et_ring *r = (volatile struct et_ring *)buf;
	uint64_t pa = phys_of(buf);

	ring_header(r, sizeof(buf));
	result_line("bytes=~0", handoff(pa, ~0ull));
	result_line("bytes=1T", handoff(pa, 1ull << 40));
	result_line("bytes=64M", handoff(pa, 64u << 20));
	result_line("bytes=0", handoff(pa, 0));
	result_line("bytes=8", handoff(pa, 8));
	r->capacity = 0xffffffffu;
	result_line("capacity=0xffffffff", handoff(pa, sizeof(buf)));
	r->capacity = (uint32_t)(sizeof(buf) / sizeof(struct et_ring_record)); /* one too many */
	result_line("capacity=128", handoff(pa, sizeof(buf)));
	r->capacity = 0;
	result_line("capacity=0", handoff(pa, sizeof(buf)));
	ring_header(r, sizeof(buf));
	r->record_size = 16;
	result_line("record_size=16", handoff(pa, sizeof(buf)));
	ring_header(r, sizeof(buf));
	r->abi_version = 99;
	result_line("abi_version=99", handoff(pa, sizeof(buf)));
	ring_header(r, sizeof(buf));
	r->magic = 0x21212121;
	result_line("magic=bad", handoff(pa, sizeof(buf)));
	calltree_run("after");
}

/* Address + size past 2^64 (and past 2^32 for the 32-bit port's sake). */
static void case_ring_wrap(void)
{
	static uint8_t buf[4096] __attribute__((aligned(64)));
	uint64_t pa = phys_of(buf);

	ring_header((volatile struct et_ring *)buf, sizeof(buf));
	result_line("at=-64", handoff(0xffffffffffffffc0ull, 4096));
	result_line("at=-4096,bytes=8192", handoff(0xfffffffffffff000ull, 8192));
	result_line("bytes=2^64-at", handoff(pa, 0 - pa));
	result_line("bytes=2^64-at+4096", handoff(pa, 0 - pa + 4096));
	result_line("at=0xffffffc0", handoff(0xffffffc0ull, 4096));
	calltree_run("after");
}

/*
 * A ring at guest-physical 0, over everything the VMM wrote for the boot
 * below the command line (arch/x86/layout.h: boot GDT and IDT, start_info,
 * the memory map or zero page, the boot stack and page tables). This
 * kernel no longer uses any of it, so the VMM must take the ring and read
 * it back at the end like any other.
 */
static void case_ring_low(void)
{
	calltree_run("early");
	ring_phase(virt_of(0), 0x20000);
}

/*
 * A ring inside the trampoline region, past the batch a small
 * --batch-events uses: while trampolines run there, the VMM must refuse
 * it (it puts the region's own bytes back at the handoff, which would wipe
 * the ring); in breakpoint mode the region is plain guest memory.
 */
static void case_ring_over_tramp(void)
{
	calltree_run("early");
	ring_phase(et_trampoline_area + TRAMP_AREA_SIZE / 2, TRAMP_AREA_SIZE / 2);
}

/* ---- the hypercall port ----------------------------------------------- */

static struct et_hypercall hc_block __attribute__((aligned(32)));

/* A block filled by hand, sent with a 32-bit write of its address. */
static int64_t raw_hypercall(volatile struct et_hypercall *hc, uint32_t abi, uint32_t nr,
			     uint64_t arg0)
{
	hc->abi_version = abi;
	hc->nr = nr;
	hc->arg0 = arg0;
	hc->arg1 = 0;
	hc->result = ET_HC_NO_VMM;
	outl(ET_PORT_HYPERCALL, (uint32_t)phys_of(hc));
	return hc->result;
}

static int64_t mark_at(uint64_t pa)
{
	return et_hypercall(ET_HC_MARK, pa, 0);
}

static void fill(volatile char *p, char c, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = c;
}

/*
 * Hypercall blocks the VMM cannot read (outside RAM, straddling its end,
 * 8- and 16-bit writes), blocks it must answer with an error (ABI version,
 * unknown number, marker strings outside RAM, wrapping, unterminated at
 * the end of RAM, too long), and three it must accept: a 255-character
 * marker, one with control characters (stored as '?'), and a block in
 * RAM's last 32 bytes. 14 hypercalls, 11 refused.
 */
static void case_hc_bad_block(void)
{
	static char text[300];
	volatile struct et_hypercall *end_block = virt_of(HOSTILE_RAM_SIZE - 32);
	static const char escape[] = "\x1b[31mhostile: red\x07";
	static const char edge[] = "hostile: block at the end of RAM";

	calltree_run("early");
	outl(ET_PORT_HYPERCALL, 0x40000000);
	outl(ET_PORT_HYPERCALL, 0xfffffff0);
	outl(ET_PORT_HYPERCALL, HOSTILE_RAM_SIZE - 16);
	outb(ET_PORT_HYPERCALL, (uint8_t)phys_of(&hc_block));
	outw(ET_PORT_HYPERCALL, (uint16_t)phys_of(&hc_block));
	hostile_line("sent 5 unreadable blocks");
	result_line("abi_version=99", raw_hypercall(&hc_block, 99, ET_HC_MARK, 0));
	result_line("nr=77", raw_hypercall(&hc_block, ET_ABI_VERSION, 77, 0));
	result_line("mark outside RAM", mark_at(0x40000000));
	result_line("mark at 2^64-1", mark_at(~0ull));
	fill(virt_of(HOSTILE_RAM_SIZE - 16), 'A', 16);
	result_line("mark unterminated at the end of RAM", mark_at(HOSTILE_RAM_SIZE - 16));
	fill(text, 'B', 256);
	text[256] = '\0';
	result_line("mark of 256 characters", mark_at(phys_of(text)));
	fill(text, 'C', 255);
	text[255] = '\0';
	result_line("mark of 255 characters", mark_at(phys_of(text)));
	result_line("mark with control characters", mark_at(phys_of(escape)));
	result_line("block at the end of RAM",
		    raw_hypercall(end_block, ET_ABI_VERSION, ET_HC_MARK, phys_of(edge)));
	calltree_run("after");
}

/*
 * 10,000 refused hypercalls, one `outl` each, in five flavours, with a
 * valid marker every 1,000; then 20 `rep outsl` of 1,024 unreadable block
 * addresses each (one instruction, 1,024 hypercalls; KVM may still take
 * an exit per element). 30,490 hypercalls, 30,480 refused, 10 markers.
 * (The VMM's cost per refused hypercall is constant: a count.)
 */
#define FLOOD_CALLS 10000u
#define FLOOD_MARK_EVERY 1000u
#define FLOOD_REP_ROUNDS 20u
#define FLOOD_REP_COUNT 1024u

static void case_hc_flood(void)
{
	static uint32_t addrs[FLOOD_REP_COUNT] __attribute__((aligned(64)));
	static const char marker[] = "hostile: flood marker";

	calltree_run("early");
	for (uint32_t i = 0; i < FLOOD_CALLS; i++) {
		switch (i % 5) {
		case 0:
			outl(ET_PORT_HYPERCALL, 0x40000000u + (i & 0xfff) * 32);
			break;
		case 1:
			raw_hypercall(&hc_block, ET_ABI_VERSION + 1, ET_HC_MARK, 0);
			break;
		case 2:
			raw_hypercall(&hc_block, ET_ABI_VERSION, 1000 + i, 0);
			break;
		case 3:
			handoff(0x40000000, 4096);
			break;
		case 4:
			mark_at(0x40000000);
			break;
		}
		if (i % FLOOD_MARK_EVERY == 0)
			mark_at(phys_of(marker));
	}
	for (uint32_t i = 0; i < FLOOD_REP_COUNT; i++)
		addrs[i] = 0x40000000u + i * 32;
	for (uint32_t k = 0; k < FLOOD_REP_ROUNDS; k++) {
		const uint32_t *p = addrs;
		unsigned long n = FLOOD_REP_COUNT;

		__asm__ volatile("cld; rep outsl"
				 : "+S"(p), "+c"(n)
				 : "d"((uint16_t)ET_PORT_HYPERCALL)
				 : "memory");
	}
	hostile_line("flood sent");
	calltree_run("after");
}

/* ---- our sites, rewritten by the guest before the handoff ------------- */

static void site_line(const char *when)
{
	print_str("hostile: patch-sites ");
	print_str(when);
	for (unsigned i = 0; i < CALLTREE_NR_FNS; i++) {
		const volatile uint8_t *s = (const volatile uint8_t *)calltree_fn_addr(i);

		print_str(" ");
		print_str(calltree_fn_name(i));
		print_str("=");
		for (unsigned k = 0; k < 5; k++) {
			static const char hex[] = "0123456789abcdef";
			char two[3] = { hex[s[k] >> 4], hex[s[k] & 15], 0 };

			print_str(two);
		}
	}
	print_str("\n");
}

static void write_site(unsigned fn, const uint8_t bytes[5])
{
	volatile uint8_t *s = (volatile uint8_t *)calltree_fn_addr(fn);

	for (unsigned k = 0; k < 5; k++)
		s[k] = bytes[k];
}

/*
 * Between the VMM's phase and the handoff, the guest writes its own bytes
 * over sites the VMM patched: a different 5-byte nop (66 66 66 66 90) over
 * ct_leaf and ct_fib, and the image's own nop5 back over ct_branch. The
 * VMM must leave the first two alone at the handoff (and say so), accept
 * the third, and guestlib then skips the first two.
 */
static void case_patch_sites(void)
{
	static const uint8_t other_nop[5] = { 0x66, 0x66, 0x66, 0x66, 0x90 };
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

	calltree_run("early");
	site_line("before");
	write_site(2, other_nop); /* ct_leaf */
	write_site(3, other_nop); /* ct_fib */
	write_site(1, nop5);	  /* ct_branch */
	sync_core();
	calltree_run("patched");
	ring_phase(ring_buf, sizeof(ring_buf));
	site_line("after");
}

/* ---- the trampolines' batch and code ---------------------------------- */

/* The batch header the VMM put in the trampoline region, or NULL (no
 * trampolines: breakpoint mode). Found by its magic rather than by
 * offset, so the region's layout may change. */
static volatile struct et_tramp_batch *find_batch(void)
{
	for (uint32_t off = 0; off + sizeof(struct et_tramp_batch) <= TRAMP_AREA_SIZE; off += 64) {
		volatile struct et_tramp_batch *b =
			(volatile struct et_tramp_batch *)(et_trampoline_area + off);

		if (b->magic == ET_TB_MAGIC && b->abi_version == ET_ABI_VERSION &&
		    b->records >= sizeof(*b) && b->records < TRAMP_AREA_SIZE)
			return b;
	}
	return 0;
}

static void lost_line(const char *what, uint64_t lost)
{
	print_str("hostile: tramp-garbage ");
	print_str(what);
	print_str(" lost=");
	print_dec((uint32_t)lost);
	print_str("\n");
}

/* n traced calls (ct_leaf's site) and nothing else: no exit, so they wait
 * in the batch. */
static void leaf_calls(unsigned n)
{
	uint32_t (*leaf)(uint32_t, uint32_t) =
		(uint32_t (*)(uint32_t, uint32_t))calltree_fn_addr(2);

	for (unsigned i = 0; i < n; i++)
		leaf(0, i);
}

/* Has the VMM drain the batch now, as a full trampoline would. */
static void drain_now(void)
{
	outb(ET_PORT_TRAMP_DRAIN, 0);
}

#define GARBAGE_LEAF_CALLS 5

/* The records the batch holds: the cursor moves 32 bytes a call from
 * where the VMM last set it. */
static uint64_t held(volatile struct et_tramp_batch *b)
{
	return (uint64_t)(b->cursor - b->start) / sizeof(struct et_ring_record);
}

/*
 * Garbage in the batch header. Each step first makes GARBAGE_LEAF_CALLS
 * traced calls so that the batch holds events (the VMM may also have
 * drained at any exit before), reads how many it holds, writes its garbage
 * and has the batch drained (no exit in between, so the count is exact),
 * prints "lost=<n>", and runs a phase of the call tree:
 *  magic, records    a header the VMM did not write: it refuses the batch,
 *                    the events in it are lost (drained with the port)
 *  cursor-misaligned the cursor 8 bytes off a record: one more call
 *                    records there; the next exit drains and the VMM
 *                    refuses the batch, that call's event with the rest
 *  cursor-max        the cursor near 2^63: the next call's xadd overflows
 *                    and it finds the batch full; the VMM refuses the
 *                    batch (its events are lost) and records that call
 *  capacity-zero     the trampolines do not read it: nothing is lost
 *  forged            every record slot 0xff, 5 of them reserved (the
 *                    events that were there are wiped: lost); the VMM
 *                    drains 5 records that name no site
 * Then a marker, and a clean phase that must be recorded exactly.
 */
static void case_tramp_garbage(void)
{
	volatile struct et_tramp_batch *b;
	static const char clean[] = "hostile: tramp-garbage clean phase";
	uint64_t lost;

	calltree_run("early");
	b = find_batch();
	if (!b) {
		hostile_line("no batch (breakpoint mode)");
		calltree_run("after");
		return;
	}
	hostile_hex_line("batch", (uint64_t)(uintptr_t)b);

	leaf_calls(GARBAGE_LEAF_CALLS);
	lost = held(b);
	b->magic = 0x21212121;
	drain_now();
	lost_line("magic", lost);
	calltree_run("magic");

	leaf_calls(GARBAGE_LEAF_CALLS);
	lost = held(b);
	b->records = 12345;
	drain_now();
	lost_line("records", lost);
	calltree_run("records");

	leaf_calls(GARBAGE_LEAF_CALLS);
	lost = held(b) + 1;
	b->cursor = b->cursor + 8;
	leaf_calls(1);
	lost_line("cursor-misaligned", lost);
	calltree_run("cursor-misaligned");

	leaf_calls(GARBAGE_LEAF_CALLS);
	lost = held(b);
	b->cursor = INT64_MAX - 8;
	leaf_calls(1);
	lost_line("cursor-max", lost);
	calltree_run("cursor-max");

	leaf_calls(GARBAGE_LEAF_CALLS);
	b->capacity = 0;
	leaf_calls(1);
	lost_line("capacity-zero", 0);
	calltree_run("capacity-zero");

	leaf_calls(GARBAGE_LEAF_CALLS);
	lost = held(b);
	{
		volatile uint8_t *rec = (volatile uint8_t *)b + b->records;
		uint64_t bytes = b->capacity * sizeof(struct et_ring_record);

		for (uint64_t i = 0; i < bytes; i++)
			rec[i] = 0xff;
		b->cursor = b->start + 5 * (int64_t)sizeof(struct et_ring_record);
	}
	drain_now();
	lost_line("forged", lost);
	calltree_run("forged");

	mark_at(phys_of(clean));
	calltree_run("clean");
}

/*
 * ud2 over the trampoline's first instruction (found from ct_root's site,
 * `call <trampoline>` in trampoline mode): the next traced call faults with
 * no IDT, a triple fault. The VMM must report the crash and still drain
 * the early phase's calls from the batch into the trace.
 */
static void case_tramp_code(void)
{
	const volatile uint8_t *site = (const volatile uint8_t *)calltree_fn_addr(0);
	volatile uint8_t *target;
	int32_t rel;

	calltree_run("early");
	if (site[0] != OP_CALL) {
		hostile_line("no trampoline (breakpoint mode)");
		calltree_run("after");
		return;
	}
	rel = (int32_t)((uint32_t)site[1] | (uint32_t)site[2] << 8 | (uint32_t)site[3] << 16 |
			(uint32_t)site[4] << 24);
	target = (volatile uint8_t *)(site + 5 + rel);
	hostile_hex_line("ud2 at", (uint64_t)(uintptr_t)target);
	target[0] = 0x0f;
	target[1] = 0x0b;
	sync_core();
	calltree_run("crash");
	hostile_line("still running");
}

/* ---- dispatch ----------------------------------------------------------- */

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "ring-outside-ram", case_ring_outside_ram },
	{ "ring-huge", case_ring_huge },
	{ "ring-wrap", case_ring_wrap },
	{ "ring-low", case_ring_low },
	{ "ring-over-tramp", case_ring_over_tramp },
	{ "hc-bad-block", case_hc_bad_block },
	{ "hc-flood", case_hc_flood },
	{ "patch-sites", case_patch_sites },
	{ "tramp-garbage", case_tramp_garbage },
	{ "tramp-code", case_tramp_code },
	{ "pt-loop", hostile_pt_loop },
	{ "pt-outside", hostile_pt_outside },
	{ "seg-base", hostile_seg_base },
};

void hostile_run(const char *name, int64_t offset)
{
	phys_offset = offset;
	case_name = name;
	et_guest_init(offset);
	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		if (str_eq(name, cases[i].name)) {
			hostile_line("begin");
			cases[i].run();
			hostile_line("end");
			boot_end();
		}
	}
	print_str("hostile: unknown case ");
	print_line(name);
	boot_end();
}
