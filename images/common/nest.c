/* SPDX-License-Identifier: MIT */
/*
 * nest=<case> (nest.h): a traced call nested in the recording of another,
 * for both recorders a guest can meet, and what must come out of it.
 *
 *  tramp       the VMM's trampolines (trampoline mode; in breakpoint mode
 *              "no batch" and nothing else). Three nestings, one traced
 *              call of nest_outer each, NEST_INNER_CALLS of nest_inner in
 *              each fault:
 *                reserved  after the outer call reserved its record (the
 *                          fault is on the record's first store);
 *                cursor    on the reservation itself (the xadd faults);
 *                cursor-ro the cursor's page read-only: where a
 *                          reservation that reads, then writes, would
 *                          fault in between (the xadd faults first);
 *                full      the outer call holds the batch's last record:
 *                          the nested calls find the batch full and exit
 *                          while that record is still being written.
 *  ring        guestlib's ring, after the handoff: nestings after the
 *              reservation on the ring's first lap (fresh), on the
 *              reservation (head, head-ro: as cursor and cursor-ro), and
 *              once the ring has wrapped (wrap: the slot still holds a
 *              complete record of the previous lap). The fault handler also reads the ring:
 *              the interrupted record must not be readable yet.
 *  tramp-exit, ring-exit
 *              the first nesting of each, then the run ends inside the
 *              fault: the interrupted record is never finished, and must
 *              be missing, not torn.
 *
 * Each nesting prints, after the fact,
 *	nest: <case> <nesting> faults=<n> at=<where> ...
 * where <where> is the interrupted instruction's offset from the
 * trampoline's or __fentry__'s entry. Built without -pg: the only traced
 * calls are nest_fns.c's and the console's.
 */
#include "nest.h"

#include <stdbool.h>

#include <earlytrace/guestlib.h>

#include "boot.h"
#include "machine.h"
#include "print.h"

#define RECORD_BYTES ((int64_t)sizeof(struct et_ring_record))
#define PAGE_MASK (~(uintptr_t)4095)
#define TRAMP_AREA_SIZE (64u * 1024)
#define RING_RECORDS 1024

/* common/trampoline_area.c: the region a tracing VMM may fill. */
extern unsigned char et_trampoline_area[];

/* A ring of its own (guestlib wants a power-of-two number of records),
 * page-aligned so that records past the first 126 lie on other pages than
 * its header: a fault on a record's page then comes after the xadd on
 * head. */
static uint8_t ring_buf[sizeof(struct et_ring) + RING_RECORDS * sizeof(struct et_ring_record)]
	__attribute__((aligned(4096)));

static const char *case_name;
static bool exit_in_fault;
static struct et_ring *ring;
static uint64_t outer_index; /* ring->head before nest_outer records */
static int outer_in_fault;   /* what the fault handler read of record
			      * outer_index: -1 not reserved yet, 0 not
			      * readable, 1 readable */

/* In each fault: the nested calls, and what a reader sees meanwhile. */
static void on_fault(void)
{
	struct et_ring_record rec;

	/* Before the nested calls: is the interrupted record reserved, and
	 * does a reader take it for complete? It must not. */
	if (ring)
		outer_in_fault = ring->head > outer_index ? et_ring_read(ring, outer_index, &rec) : -1;
	for (unsigned i = 0; i < NEST_INNER_CALLS; i++)
		nest_inner();
	if (exit_in_fault) {
		print_str("nest: ");
		print_str(case_name);
		print_line(" exit inside the recording");
		machine_exit(0);
	}
}

static void line_start(const char *nesting)
{
	print_str("nest: ");
	print_str(case_name);
	print_str(" ");
	print_str(nesting);
	print_str(" faults=");
	print_dec(nest_faults);
}

/* Where the last fault interrupted, as an offset from entry. */
static void print_at(uintptr_t entry)
{
	print_str(" at=+");
	print_hex(nest_fault_rip - entry);
}

/* One traced call of nest_outer with the page of addr armed. */
static void nest_once(const volatile void *addr, enum nest_arm how)
{
	nest_faults = 0;
	nest_arm(addr, how);
	nest_outer();
}

/* ---- the trampolines ---------------------------------------------------- */

/* The batch header, found by its magic (the VMM's layout may change). */
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

/* Where the site of fn calls: its trampoline. */
static uintptr_t call_target(void (*fn)(void))
{
	const volatile uint8_t *site = (const volatile uint8_t *)fn;
	int32_t rel = (int32_t)((uint32_t)site[1] | (uint32_t)site[2] << 8 |
				(uint32_t)site[3] << 16 | (uint32_t)site[4] << 24);

	return site[0] == 0xe8 ? (uintptr_t)site + 5 + (intptr_t)rel : 0;
}

static void tramp_line(const char *nesting, uintptr_t tramp)
{
	line_start(nesting);
	print_at(tramp);
	print_str("\n");
}

static void nest_tramp(void)
{
	volatile struct et_tramp_batch *b = find_batch();
	uintptr_t tramp = call_target(nest_outer), end, header_page;

	if (!b || !tramp) {
		print_str("nest: ");
		print_str(case_name);
		print_line(" no batch (breakpoint mode)");
		return;
	}
	end = (uintptr_t)b + b->records + b->capacity * RECORD_BYTES;
	header_page = (uintptr_t)b & PAGE_MASK;
	if (((end - RECORD_BYTES) & PAGE_MASK) == header_page) {
		print_line("nest: the batch is too small to leave its header's page");
		machine_exit(6);
	}

	/* reserved: the next record on a page of its own, made absent. */
	while (((end + (uintptr_t)b->cursor) & PAGE_MASK) == header_page || b->cursor >= 0)
		nest_filler();
	nest_once((const volatile void *)(end + (uintptr_t)b->cursor), NEST_ABSENT);
	tramp_line("reserved", tramp);

	/* cursor: the page of the cursor itself, so the xadd faults; then
	 * read-only, where a reservation in two steps (read, then write)
	 * would fault between them. */
	nest_once(&b->cursor, NEST_ABSENT);
	tramp_line("cursor", tramp);
	nest_once(&b->cursor, NEST_READ_ONLY);
	tramp_line("cursor-ro", tramp);

	/* full: the outer call takes the last record. */
	while (b->cursor != -RECORD_BYTES)
		nest_filler();
	nest_once((const volatile void *)(end - RECORD_BYTES), NEST_ABSENT);
	tramp_line("full", tramp);
}

/* ---- guestlib's ring ---------------------------------------------------- */

static uintptr_t slot_of(uint64_t i)
{
	return (uintptr_t)&ring->records[i & ring->slot_mask];
}

static void ring_line(const char *nesting)
{
	static const char *const in_fault[] = { "not-reserved", "unreadable", "readable" };
	struct et_ring_record rec;
	unsigned outer = 0, inner = 0;

	line_start(nesting);
	print_at((uintptr_t)__fentry__);
	/* What the ring holds now: the outer record and the nested ones, in
	 * the order they reserved, each complete. */
	for (unsigned k = 0; k <= NEST_INNER_CALLS; k++) {
		if (!et_ring_read(ring, outer_index + k, &rec))
			continue;
		outer += rec.ip == (uintptr_t)nest_outer;
		inner += rec.ip == (uintptr_t)nest_inner;
	}
	print_str(" outer=");
	print_dec(outer);
	print_str(" inner=");
	print_dec(inner);
	print_str(" in-fault=");
	print_line(in_fault[outer_in_fault + 1]);
}

/* One nesting after the reservation of the next record, which must lie on
 * another page than the ring's header. */
static void ring_once(const volatile void *armed, enum nest_arm how)
{
	while ((slot_of(ring->head) & PAGE_MASK) == ((uintptr_t)ring & PAGE_MASK))
		nest_filler();
	outer_index = ring->head;
	nest_once(armed ? armed : (const volatile void *)slot_of(outer_index), how);
}

static void nest_ring(int64_t phys_offset)
{
	struct et_trace_info info;
	int ret;

	et_guest_init(phys_offset);
	ret = et_trace_start(ring_buf, sizeof(ring_buf), 0, &info);
	if (ret) {
		print_str("nest: ");
		print_str(case_name);
		print_line(" handoff refused");
		return;
	}
	ring = et_trace_ring();

	ring_once(0, NEST_ABSENT);
	ring_line("fresh");
	/* head: on the reservation, and between its read and its write. */
	ring_once(&ring->head, NEST_ABSENT);
	ring_line("head");
	ring_once(&ring->head, NEST_READ_ONLY);
	ring_line("head-ro");

	/* wrap: every slot holds a complete record of the previous lap. */
	while (ring->head < ring->capacity + RING_RECORDS / 4)
		nest_filler();
	ring_once(0, NEST_ABSENT);
	ring_line("wrap");
	et_trace_stop(&info);
}

static bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

void nest_run(const char *name, int64_t phys_offset)
{
	case_name = name;
	exit_in_fault = str_eq(name, "tramp-exit") || str_eq(name, "ring-exit");
	nest_cpu_init(on_fault);
	if (str_eq(name, "tramp") || str_eq(name, "tramp-exit")) {
		nest_tramp();
	} else if (str_eq(name, "ring") || str_eq(name, "ring-exit")) {
		nest_ring(phys_offset);
	} else {
		print_str("nest: unknown case ");
		print_line(name);
	}
	boot_end();
}
