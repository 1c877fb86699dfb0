/* SPDX-License-Identifier: MIT */
/*
 * The drain protocol, the VMM's side: taking the records the trampolines
 * completed out of the batch in guest memory, and setting its cursor back
 * (the protocol is in abi.h, struct et_tramp_batch).
 *
 * The VMM reads the batch only while the vCPU is stopped, but it may be
 * stopped in the middle of a recording, or with recordings interrupted
 * under the code that made the exit (a traced call in an interrupt
 * handler that found the batch full). Such a record is reserved and not
 * complete: its ip is still 0. Its writer will finish it later, into the
 * same slot, so the slot stays out of the next epochs until a drain finds
 * it complete ("pending"). The cursor only moves towards the array's end,
 * so an epoch runs from above the last pending slot to the end; while one
 * blocks the very end, every call exits and the VMM records it itself
 * (slow, never lost).
 */
#include <string.h>

#include "trampolines/placement.h"

#define RECORD_BYTES ((int64_t)sizeof(struct et_ring_record))

/* The guest's cursor, as wide as the code that moves it. */
static int64_t read_cursor(const struct trampolines *tr, const struct et_tramp_batch *b)
{
	return tr->tpl->word_bytes == 4 ? (int64_t)(int32_t)(uint32_t)b->cursor : b->cursor;
}

/* The record `off` bytes before the array's end, or NULL outside RAM. */
static struct et_ring_record *slot_at(const struct trampolines *tr, const struct guest_mem *gm,
				      int64_t off)
{
	uint64_t end = tr->base + tr->tpl->size + tr->capacity * (uint64_t)RECORD_BYTES;

	return guest_mem_ptr(gm, end + (uint64_t)off, sizeof(struct et_ring_record));
}

/* Complete: the trampoline wrote ip, its last store (32-bit kernels write
 * the low half only). */
static bool complete(const struct trampolines *tr, const struct et_ring_record *r)
{
	return (tr->tpl->word_bytes == 4 ? (uint32_t)r->ip : r->ip) != 0;
}

static bool header_ours(const struct trampolines *tr, const struct et_tramp_batch *b)
{
	return b->magic == ET_TB_MAGIC && b->records == tr->tpl->size - tr->tpl->header;
}

/* Where the guest's cursor may be: in this epoch, at a record boundary,
 * and past the end by no more than calls that found the batch full while
 * nested in each other could have moved it. */
static bool cursor_plausible(const struct trampolines *tr, int64_t cursor)
{
	/* The bounds first: the guest's cursor can be any number, and only
	 * within them is its distance from start computable. */
	return cursor >= tr->start && cursor <= TRAMP_MAX_PENDING * RECORD_BYTES &&
	       (cursor - tr->start) % RECORD_BYTES == 0;
}

bool trampolines_batch_dirty(const struct trampolines *tr, const struct guest_mem *gm)
{
	struct et_tramp_batch *b;

	if (!tr->installed)
		return false;
	b = trampolines_batch_header(tr, gm);
	return b && (tr->nr_pending || !header_ours(tr, b) || read_cursor(tr, b) != tr->start);
}

/* Empties the slots [from, to) (offsets from the array's end). */
static void clear(const struct trampolines *tr, const struct guest_mem *gm, int64_t from,
		  int64_t to)
{
	uint64_t end = tr->base + tr->tpl->size + tr->capacity * (uint64_t)RECORD_BYTES;
	void *p = to > from ? guest_mem_ptr(gm, end + (uint64_t)from, (uint64_t)(to - from)) : NULL;

	if (p)
		memset(p, 0, (size_t)(to - from));
}

/* Hands a complete record to fn and frees its slot. */
static void take(struct et_ring_record *r, tramp_record_fn fn, void *ctx)
{
	struct et_ring_record copy = *r;

	memset(r, 0, sizeof(*r));
	fn(ctx, &copy);
}

/* Unfinished records in this epoch's reserved slots [start, end). */
static unsigned unfinished(const struct trampolines *tr, const struct guest_mem *gm, int64_t end)
{
	unsigned n = 0;

	for (int64_t off = tr->start; off < end; off += RECORD_BYTES) {
		const struct et_ring_record *r = slot_at(tr, gm, off);

		n += r && !complete(tr, r);
	}
	return n;
}

/* Counts a complete record's TSC when it lies in [lo, hi]. */
static void note_tsc(const struct trampolines *tr, const struct et_ring_record *r, uint64_t lo,
		     uint64_t hi, uint64_t *out, size_t max, size_t *n)
{
	if (!r || !complete(tr, r) || r->tsc < lo || r->tsc > hi)
		return;
	if (*n < max)
		out[*n] = r->tsc;
	(*n)++;
}

size_t trampolines_batch_tscs(const struct trampolines *tr, const struct guest_mem *gm,
			      uint64_t lo, uint64_t hi, uint64_t *out, size_t max)
{
	struct et_tramp_batch *b;
	int64_t cursor;
	size_t n = 0;

	if (!tr->installed || !(b = trampolines_batch_header(tr, gm)))
		return 0;
	cursor = read_cursor(tr, b);
	if (!header_ours(tr, b) || !cursor_plausible(tr, cursor))
		return 0;
	for (unsigned i = 0; i < tr->nr_pending; i++)
		note_tsc(tr, slot_at(tr, gm, tr->pending[i]), lo, hi, out, max, &n);
	for (int64_t off = tr->start; off < (cursor < 0 ? cursor : 0); off += RECORD_BYTES)
		note_tsc(tr, slot_at(tr, gm, off), lo, hi, out, max, &n);
	return n;
}

int64_t trampolines_batch_take(struct trampolines *tr, const struct guest_mem *gm,
			       tramp_record_fn fn, void *ctx)
{
	struct et_tramp_batch *b;
	int64_t cursor, end, n = 0;
	unsigned kept = 0;

	if (!tr->installed)
		return 0;
	b = trampolines_batch_header(tr, gm);
	if (!b)
		return 0;
	/* The guest can write here: trust nothing but the layout we made. A
	 * cursor moved over more slots than nested recordings could leave
	 * unfinished is the guest's too. */
	cursor = read_cursor(tr, b);
	end = cursor < 0 ? cursor : 0;
	if (!header_ours(tr, b) || !cursor_plausible(tr, cursor) ||
	    tr->nr_pending + unfinished(tr, gm, end) > TRAMP_MAX_PENDING) {
		/* Its records are lost. Empty every slot, or a later epoch
		 * would find the guest's leftovers complete. */
		clear(tr, gm, -(int64_t)tr->capacity * RECORD_BYTES, 0);
		tr->nr_pending = 0;
		return -1;
	}
	/* Reserved in an earlier epoch: older than anything in this one. */
	for (unsigned i = 0; i < tr->nr_pending; i++) {
		struct et_ring_record *r = slot_at(tr, gm, tr->pending[i]);

		if (r && complete(tr, r)) {
			take(r, fn, ctx);
			n++;
		} else if (r) {
			tr->pending[kept++] = tr->pending[i];
		}
	}
	tr->nr_pending = kept;
	for (int64_t off = tr->start; off < end; off += RECORD_BYTES) {
		struct et_ring_record *r = slot_at(tr, gm, off);

		if (r && complete(tr, r)) {
			take(r, fn, ctx);
			n++;
		} else if (r) {
			tr->pending[tr->nr_pending++] = off; /* counted above: fits */
		}
	}
	return n;
}

void trampolines_batch_reset(struct trampolines *tr, const struct guest_mem *gm,
			     uint64_t capacity)
{
	struct et_tramp_batch *b = trampolines_batch_header(tr, gm);
	int64_t start;

	if (!tr->installed || !b)
		return;
	if (capacity > tr->capacity)
		capacity = tr->capacity;
	start = -(int64_t)capacity * RECORD_BYTES;
	for (unsigned i = 0; i < tr->nr_pending; i++)
		if (tr->pending[i] + RECORD_BYTES > start)
			start = tr->pending[i] + RECORD_BYTES;
	tr->start = start;
	b->magic = ET_TB_MAGIC;
	b->abi_version = ET_ABI_VERSION;
	b->records = tr->tpl->size - tr->tpl->header;
	b->capacity = tr->capacity;
	b->start = start;
	b->drains = tr->drains;
	b->cursor = start; /* last: the next call takes the new epoch */
}
