/* SPDX-License-Identifier: MIT */
#include "trampolines/placement.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/error.h"

#define RECORD_BYTES sizeof(struct et_ring_record)
#define PAGE 4096

static uint64_t page_up(uint64_t x)
{
	return (x + PAGE - 1) & ~(uint64_t)(PAGE - 1);
}

/* Several batches: each as large as an equal share of the room allows
 * (or max_records), a whole number of pages apart. */
static int plan_batches(struct trampolines *tr, uint64_t room, uint64_t max_records,
			unsigned nr_batches)
{
	uint64_t share = (room / nr_batches) & ~(uint64_t)(PAGE - 1);

	if (!tr->tpl->smp_record_entry)
		return et_error("the %s trampolines record on one vCPU only; this machine has %u "
				"(--cpus)", tr->tpl->arch, nr_batches);
	if (share < tr->tpl->size || (share - tr->tpl->size) / RECORD_BYTES < TRAMP_MIN_RECORDS)
		return et_error("%s holds too little for %u vCPUs' batches: %" PRIu64 " bytes, "
				"%" PRIu64 " a vCPU for the code and at least %d records",
				tr->region.desc, nr_batches, tr->region.size,
				(uint64_t)tr->tpl->size + TRAMP_MIN_RECORDS * RECORD_BYTES,
				TRAMP_MIN_RECORDS);
	tr->capacity = (share - tr->tpl->size) / RECORD_BYTES;
	if (max_records && max_records < tr->capacity)
		tr->capacity = max_records;
	tr->stride = page_up(tr->tpl->size + tr->capacity * RECORD_BYTES);
	tr->nr_batches = nr_batches;
	/* The smp entry's imul: the offset of the last batch fits 31 bits. */
	if (tr->stride * nr_batches > INT32_MAX)
		return et_error("%u vCPUs' batches of %" PRIu64 " bytes do not fit the "
				"trampolines' 32-bit offsets", nr_batches, tr->stride);
	return 0;
}

int trampolines_plan(struct trampolines *tr, const struct tramp_region *region,
		     unsigned elf_class, size_t nr_slots, uint64_t max_records)
{
	return trampolines_plan_batches(tr, region, elf_class, nr_slots, max_records, 1);
}

int trampolines_plan_batches(struct trampolines *tr, const struct tramp_region *region,
			     unsigned elf_class, size_t nr_slots, uint64_t max_records,
			     unsigned nr_batches)
{
	uint64_t end = region->paddr + region->size, records, room, slot_room;

	memset(tr, 0, sizeof(*tr));
	tr->tpl = tramp_template_for(elf_class);
	if (!tr->tpl)
		return et_error("no trampoline template for %u-bit kernels", elf_class);
	tr->region = *region;
	tr->virt_offset = region->vaddr - region->paddr;
	tr->base = (region->paddr + PAGE - 1) & ~(uint64_t)(PAGE - 1); /* code on its own pages */
	records = tr->base + tr->tpl->size;
	room = records < end ? end - records : 0;
	/* Slots are code: they start on a page of their own, after the
	 * records (up to a page of padding). */
	slot_room = nr_slots ? nr_slots * TRAMP_SLOT_BYTES + PAGE : 0;
	if (nr_slots > room / TRAMP_SLOT_BYTES || slot_room > room ||
	    (room - slot_room) / RECORD_BYTES < TRAMP_MIN_RECORDS)
		return et_error("%s holds too little: %" PRIu64 " bytes for the code, %zu oneshot "
				"slots and at least %d records",
				region->desc, region->size, nr_slots, TRAMP_MIN_RECORDS);
	tr->capacity = (room - slot_room) / RECORD_BYTES;
	if (max_records && max_records < tr->capacity)
		tr->capacity = max_records;
	tr->nr_batches = 1;
	if (nr_batches > 1 && (nr_slots || plan_batches(tr, end - tr->base, max_records,
							nr_batches)))
		return nr_slots ? et_error("--oneshot trampolines record on one vCPU only; this "
					   "machine has %u (--cpus)", nr_batches)
				: -1;
	tr->nr_slots = nr_slots;
	tr->slots_paddr = page_up(records + tr->capacity * RECORD_BYTES);
	tr->end_vaddr = records + tr->capacity * RECORD_BYTES + tr->virt_offset;
	/* The code addresses records as a 32-bit displacement from their end
	 * (templates.h): sign-extended on x86-64, so the end must lie in the
	 * top or bottom 2 GiB (as any kernel built with -mcmodel=kernel or
	 * small does); 32-bit addresses always fit. */
	if (tr->tpl->word_bytes == 8 && ((int64_t)tr->end_vaddr < INT32_MIN ||
					 (int64_t)tr->end_vaddr > INT32_MAX - (int64_t)RECORD_BYTES))
		return et_error("%s is at 0x%" PRIx64 ", outside the top and bottom 2 GiB of the "
				"address space, where the trampolines' 32-bit displacements reach",
				region->desc, region->vaddr);
	return 0;
}

struct et_tramp_batch *trampolines_batch_header(const struct trampolines *tr,
						const struct guest_mem *gm)
{
	return guest_mem_ptr(gm, tr->base + tr->tpl->header, sizeof(struct et_tramp_batch));
}

/* Adds `value` to the 32-bit little-endian displacements at `relocs`. */
static void relocate(uint8_t *code, const uint32_t *relocs, size_t nr, uint64_t value)
{
	for (size_t i = 0; i < nr; i++) {
		uint32_t disp;

		memcpy(&disp, code + relocs[i], sizeof(disp));
		disp += (uint32_t)value;
		memcpy(code + relocs[i], &disp, sizeof(disp));
	}
}

static bool all_same(const uint8_t *p, uint64_t len)
{
	return len == 0 || (p[0] == p[len - 1] && memcmp(p, p + 1, len - 1) == 0);
}

int trampolines_install(struct trampolines *tr, const struct guest_mem *gm)
{
	uint8_t *region = guest_mem_ptr(gm, tr->region.paddr, tr->region.size);
	uint8_t *code = guest_mem_ptr(gm, tr->base, tr->tpl->size);
	uint8_t *records = guest_mem_ptr(gm, tr->base + tr->tpl->size, tr->capacity * RECORD_BYTES);

	if (!region || !code || !records)
		return et_error("%s lies outside guest RAM", tr->region.desc);
	/* A region found in a gap holds only fill bytes (tramp_region.c): one
	 * byte restores it, where a copy would hold megabytes for the run. */
	tr->saved_fill = tr->region.size && all_same(region, tr->region.size) ? region[0] : -1;
	if (tr->saved_fill < 0) {
		tr->saved = malloc(tr->region.size);
		if (!tr->saved)
			return et_error("out of memory saving %s", tr->region.desc);
		memcpy(tr->saved, region, tr->region.size);
	}
	memcpy(code, tr->tpl->bytes, tr->tpl->size);
	relocate(code, tr->tpl->end_relocs, tr->tpl->nr_end_relocs, tr->end_vaddr);
	relocate(code, tr->tpl->base_relocs, tr->tpl->nr_base_relocs, tr->base + tr->virt_offset);
	for (size_t i = 0; i < tr->tpl->nr_stride_relocs; i++) {
		uint32_t stride = (uint32_t)tr->stride;

		memcpy(code + tr->tpl->stride_relocs[i], &stride, sizeof(stride));
	}
	/* A record is complete once its ip is not 0 (abi.h): every slot
	 * starts empty, whatever fill the region had. */
	memset(records, 0, tr->capacity * RECORD_BYTES);
	tr->installed = true;
	tr->nr_pending = 0;
	trampolines_batch_reset(tr, gm, tr->capacity);
	return 0;
}

uint64_t trampolines_record_entry(const struct trampolines *tr)
{
	return tr->base + tr->virt_offset +
	       (tr->nr_batches > 1 ? tr->tpl->smp_record_entry : tr->tpl->record_entry);
}

int trampolines_batch_view(const struct trampolines *first, unsigned i, struct trampolines *out,
			   const struct guest_mem *gm)
{
	uint8_t *batch;

	*out = *first;
	out->base = first->base + i * first->stride;
	out->saved = NULL; /* the region is the first's to put back */
	out->saved_fill = -1;
	out->nr_pending = 0;
	out->drains = out->full_drains = 0;
	out->installed = false;
	batch = guest_mem_ptr(gm, out->base + first->tpl->header,
			      first->tpl->size - first->tpl->header + first->capacity * RECORD_BYTES);
	if (!first->installed || i >= first->nr_batches || !batch)
		return et_error("no room for vCPU %u's trampoline batch", i);
	memset(batch, 0, first->tpl->size - first->tpl->header + first->capacity * RECORD_BYTES);
	out->installed = true;
	trampolines_batch_reset(out, gm, out->capacity);
	return 0;
}

bool trampolines_next_slot(const struct trampolines *tr, uint64_t *vaddr)
{
	if (tr->slots_used == tr->nr_slots)
		return false;
	*vaddr = tr->slots_paddr + tr->slots_used * TRAMP_SLOT_BYTES + tr->virt_offset;
	return true;
}

int trampolines_take_slot(struct trampolines *tr, const struct guest_mem *gm,
			  const uint8_t orig[X86_SITE_LEN])
{
	uint64_t slot = tr->slots_paddr + tr->slots_used * TRAMP_SLOT_BYTES;
	uint8_t *p = guest_mem_ptr(gm, slot, TRAMP_SLOT_BYTES);

	/* Both inside the region: the rel32 always reaches. */
	if (tr->slots_used == tr->nr_slots || !p ||
	    !x86_encode_call_rel32(p, slot, tr->base + tr->tpl->oneshot_entry))
		return -1;
	memcpy(&p[X86_CALL_REL32_LEN], orig, X86_SITE_LEN);
	tr->slots_used++;
	return 0;
}



void trampolines_remove(struct trampolines *tr, const struct guest_mem *gm)
{
	uint8_t *region = guest_mem_ptr(gm, tr->region.paddr, tr->region.size);

	if (!tr->installed)
		return;
	if (region && tr->saved)
		memcpy(region, tr->saved, tr->region.size);
	else if (region && tr->saved_fill >= 0)
		memset(region, tr->saved_fill, tr->region.size);
	tr->installed = false;
}

void trampolines_free(struct trampolines *tr)
{
	free(tr->saved);
	memset(tr, 0, sizeof(*tr));
}
