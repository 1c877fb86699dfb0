/* SPDX-License-Identifier: MIT */
/*
 * The guest's trace ring (struct et_ring in abi.h): one producer, lock-free,
 * overwrite-oldest, a power-of-two number of slots.
 *
 * Writer protocol, per record i (i = head before the call):
 *   1. write record i into slot i % capacity (when i >= capacity this
 *      overwrites record i - capacity);
 *   2. compiler barrier;
 *   3. if it overwrote one, lost += 1;
 *   4. head = i + 1 (the publication).
 * x86 keeps stores in program order (TSO), so the compiler barrier is the
 * only fence needed for a reader on another CPU, the VMM included.
 *
 * Reader protocol: read head (h1), copy records max(0, h1 - capacity) ..
 * h1 - 1, read head again (h2). A copied record j is intact only if
 * j > h2 - capacity: slot j % capacity may have been rewritten, or be in
 * the middle of a rewrite, for any j <= h2 - capacity. `lost` never runs
 * ahead of head (it is stored first), so lost read after head is at least
 * as large as the head it went with.
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
	/* A power of two, so a slot is head & (capacity - 1): a divide on
	 * every call would be the costliest instruction on the path. */
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
	r->reserved = 0;
	r->head = 0;
	barrier();
	r->magic = ET_RING_MAGIC;
	barrier();
	return 0;
}

ET_NOTRACE void et_ring_record(struct et_ring *r, uint64_t tsc, uint64_t ip,
			       uint64_t parent_ip, uint32_t cpu, uint16_t kind, uint16_t flags)
{
	uint64_t i = r->head;
	struct et_ring_record *rec = &r->records[(uint32_t)i & (r->capacity - 1)];

	/* Field by field, so gcc emits plain stores, never a memcpy call. */
	rec->tsc = tsc;
	rec->ip = ip;
	rec->parent_ip = parent_ip;
	rec->cpu = cpu;
	rec->kind = kind;
	rec->flags = flags;
	barrier();
	if (i >= r->capacity)
		r->lost = r->lost + 1;
	barrier();
	r->head = i + 1;
}
