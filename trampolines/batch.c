/* SPDX-License-Identifier: MIT */
/*
 * The drain protocol, the VMM's side: reading a batch the trampolines
 * filled in guest memory, and emptying it (trampolines/placement.h).
 */
#include "trampolines/placement.h"

#define RECORD_BYTES sizeof(struct et_ring_record)

const struct et_ring_record *trampolines_batch(struct trampolines *tr,
					       const struct guest_mem *gm, uint64_t *n,
					       bool *corrupt)
{
	struct et_tramp_batch *b = trampolines_batch_header(tr, gm);
	uint64_t count;

	*n = 0;
	*corrupt = false;
	if (!tr->installed || !b)
		return NULL;
	/* The guest can write here: trust nothing but the layout we made. */
	count = b->count;
	if (b->magic != ET_TB_MAGIC || b->records != tr->tpl->size - tr->tpl->header ||
	    count > tr->capacity) {
		*corrupt = true;
		return NULL;
	}
	*n = count;
	return guest_mem_ptr(gm, tr->base + tr->tpl->size, tr->capacity * RECORD_BYTES);
}

void trampolines_batch_reset(struct trampolines *tr, const struct guest_mem *gm,
			     uint64_t capacity)
{
	struct et_tramp_batch *b = trampolines_batch_header(tr, gm);

	if (!tr->installed || !b)
		return;
	b->magic = ET_TB_MAGIC;
	b->abi_version = ET_ABI_VERSION;
	b->records = tr->tpl->size - tr->tpl->header;
	b->capacity = capacity < tr->capacity ? capacity : tr->capacity;
	b->count = 0;
	b->drains = tr->drains;
}
