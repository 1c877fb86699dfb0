/* SPDX-License-Identifier: MIT */
/*
 * The guest's trace ring (struct et_ring in abi.h): lock-free,
 * overwrite-oldest, a power-of-two number of slots, one CPU's.
 *
 * Writer protocol (__fentry__, fentry_*.S), per record:
 *   1. i = head++ in one xadd: record i and slot i & slot_mask are ours,
 *      whatever interrupt or NMI records meanwhile (it gets i + 1...);
 *   2. tsc, ip, parent_ip, kind and flags;
 *   3. cpu = (uint32_t)i, last.
 * Until step 3 the slot's cpu names another index (the record a previous
 * lap left there, or ~0 from et_ring_init), so a reader never takes a
 * record being written, nor one a later lap is overwriting, for record i.
 * On one CPU no fence is needed: a nested writer runs to its end before
 * the writer it interrupted goes on, and the VMM reads with the vCPU
 * stopped.
 *
 * Reader protocol (et_ring_read): with h = head, records max(0, h -
 * capacity) .. h - 1 are kept; record j of those is read if its slot's cpu
 * is (uint32_t)j before and after copying it (a writer nested in the
 * reader finishes before the reader goes on, so the second look catches a
 * slot it rewrote). One case is not caught: a writer interrupted inside
 * its recording while nested writers make `capacity` more records, whose
 * last lands in its slot; the slot then mixes two records until the
 * interrupted writer finishes, and a reader looking exactly then (the VMM
 * stopping the run there) takes the mix. A ring far larger than what one
 * interrupt records keeps that from happening.
 */
#include <earlytrace/guestlib.h>

#define barrier() __asm__ volatile("" : : : "memory")

ET_NOTRACE int et_ring_init(struct et_ring *r, size_t bytes, uint64_t tsc_khz)
{
	size_t cap;

	if (!r || bytes < sizeof(*r) + sizeof(struct et_ring_record))
		return ET_E_INVAL;
	cap = (bytes - sizeof(*r)) / sizeof(struct et_ring_record);
	if (cap > 0x80000000u)
		cap = 0x80000000u;
	/* A power of two, so a slot is head & slot_mask: a divide on every
	 * call would be the costliest instruction on the path. */
	while (cap & (cap - 1))
		cap &= cap - 1;

	/* Field by field: no memset in a freestanding image. head goes last
	 * among the counters and magic very last, so a reader that finds the
	 * magic finds a consistent, empty ring. */
	r->magic = 0;
	r->abi_version = ET_ABI_VERSION;
	r->record_size = sizeof(struct et_ring_record);
	r->capacity = (uint32_t)cap;
	r->tsc_khz = tsc_khz;
	r->lost = 0;
	r->vmm_events = 0;
	r->vmm_dropped = 0;
	r->slot_mask = cap - 1;
	/* Every slot empty: no record's index (a record ~0 would be the
	 * 2^32-th), and the high halves a 32-bit writer leaves alone zero. */
	for (size_t i = 0; i < cap; i++) {
		struct et_ring_record *rec = &r->records[i];

		rec->tsc = 0;
		rec->ip = 0;
		rec->parent_ip = 0;
		rec->cpu = ~0u;
		rec->kind = 0;
		rec->flags = 0;
	}
	r->head = 0;
	barrier();
	r->magic = ET_RING_MAGIC;
	barrier();
	return 0;
}

ET_NOTRACE int et_ring_read(const struct et_ring *r, uint64_t i, struct et_ring_record *out)
{
	uint64_t head = r->head;
	const volatile struct et_ring_record *rec;
	int guest = i >= r->vmm_events;

	if (i >= head || head - i > r->capacity || !r->capacity)
		return 0; /* not written yet, or overwritten */
	/* 32-bit arithmetic: i386 has no 64-bit division here, and the slot
	 * only depends on the low bits (a power-of-two capacity). */
	rec = &r->records[(uint32_t)i & (r->capacity - 1)];
	if (guest && rec->cpu != (uint32_t)i)
		return 0;
	out->tsc = rec->tsc;
	out->ip = rec->ip;
	out->parent_ip = rec->parent_ip;
	out->cpu = rec->cpu;
	out->kind = rec->kind;
	out->flags = rec->flags;
	barrier();
	if (guest) {
		if (rec->cpu != (uint32_t)i)
			return 0;
		out->cpu = 0; /* one CPU's ring */
	}
	return 1;
}
