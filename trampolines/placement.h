/* SPDX-License-Identifier: MIT */
/*
 * Placing the trampolines: the template code and its batch in the
 * trampoline region (trampolines/region.h finds it), and the oneshot
 * slots; trampolines/batch.c is the drain protocol's VMM side. Which
 * sites call here is trampoline mode's choice (vmm/trace/tramp_mode.c).
 *
 * Region layout (from its first page boundary):
 *
 *	trampoline code                       \  the template, copied as is
 *	batch header, on the next page        /  (trampolines/ templates)
 *	records[capacity]                     32 bytes each
 *	oneshot slots, from the next page     SLOT_BYTES each, packed
 *
 * Code and the data it writes on every call never share a page: that
 * would be self-modifying code to the CPU.
 *
 * A oneshot slot is `call <oneshot trampoline>` followed by its site's
 * five original bytes; the trampoline copies them back over the site
 * after recording, so each site records once and then runs its own code.
 * The region's own bytes are saved first and put back when the
 * trampolines are removed, so the guest never sees ours after handoff.
 */
#ifndef TRAMPOLINES_PLACEMENT_H
#define TRAMPOLINES_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/insn.h"
#include "earlytrace/abi.h"
#include "trampolines/region.h"
#include "trampolines/templates.h"
#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRAMP_SLOT_BYTES 10 /* call rel32 + 5 original bytes */
#define TRAMP_MIN_RECORDS 64
/* Records reserved but not yet complete that a drain keeps track of: one
 * per recording an interrupt (or an interrupt's interrupt) is nested in.
 * More than this and the batch is one the guest scribbled on. */
#define TRAMP_MAX_PENDING 16

struct trampolines {
	const struct tramp_template *tpl;
	struct tramp_region region;
	uint64_t base;		  /* paddr of the code (the region's first page) */
	uint64_t virt_offset;	  /* region vaddr - paddr */
	uint64_t capacity;	  /* records that fit */
	uint64_t slots_paddr;	  /* first oneshot slot */
	size_t nr_slots, slots_used;
	uint8_t *saved;		  /* the region's bytes before install, or NULL... */
	int saved_fill;		  /* ...when all were this byte (-1: not so) */
	uint64_t end_vaddr;	  /* the record array's end, as the code addresses it */
	/* Several vCPUs: nr_batches batches, vCPU i's at base + i * stride
	 * (each laid out like the first: a page-sized gap where the first has
	 * the code, the header, the records). 1 and 0 with one vCPU. */
	unsigned nr_batches;
	uint64_t stride;
	bool installed;
	uint64_t drains;	  /* batches drained (full, and forced) */
	uint64_t full_drains;	  /* of which the guest asked for: one exit each */
	/* The drain's own copy of the batch state (trampolines/batch.c): the
	 * guest can write the header, so it is never read back. */
	int64_t start;		  /* the cursor after the last reset */
	int64_t pending[TRAMP_MAX_PENDING]; /* reserved, not yet complete */
	unsigned nr_pending;
};

/*
 * Lays the region out for a kernel of elf_class with room for nr_slots
 * oneshot slots (0 without --oneshot) and at most max_records records
 * (0: as many as fit). 0, or -1 with an error saying why trampolines do
 * not fit.
 */
int trampolines_plan(struct trampolines *tr, const struct tramp_region *region,
		     unsigned elf_class, size_t nr_slots, uint64_t max_records);
/* The same with a batch for each of nr_batches vCPUs, picked by the
 * trampoline from TSC_AUX (nr_batches > 1: templates with an smp entry
 * only, no oneshot slots). -1 with an error when they do not fit. */
int trampolines_plan_batches(struct trampolines *tr, const struct tramp_region *region,
			     unsigned elf_class, size_t nr_slots, uint64_t max_records,
			     unsigned nr_batches);

/* After trampolines_install(): makes *out the drain's view of vCPU i's
 * batch (i > 0), as batch.c's functions take it, with an empty batch in
 * guest memory. Removing or freeing it leaves the region to the first. */
int trampolines_batch_view(const struct trampolines *first, unsigned i, struct trampolines *out,
			   const struct guest_mem *gm);

/* Saves the region's bytes, then writes the template and an empty batch. */
int trampolines_install(struct trampolines *tr, const struct guest_mem *gm);

/* Where a site calls to record every call (virtual, as the code runs). */
uint64_t trampolines_record_entry(const struct trampolines *tr);

/* Oneshot: the next free slot's virtual address; false when none is left. */
bool trampolines_next_slot(const struct trampolines *tr, uint64_t *vaddr);
/* Fills the next slot with `call <oneshot trampoline>` and the site's own
 * bytes, which the trampoline copies back over the site, and takes it.
 * 0, or -1 when no slot is left. */
int trampolines_take_slot(struct trampolines *tr, const struct guest_mem *gm,
			  const uint8_t orig[X86_SITE_LEN]);

/* The batch header in guest memory, NULL when it is not in RAM. */
struct et_tramp_batch *trampolines_batch_header(const struct trampolines *tr,
						const struct guest_mem *gm);

/*
 * The guest TSCs of the complete records in the batch that lie in
 * [lo, hi], without taking them: up to max into out; returns how many
 * there are (more than max: only max were written). 0 when the header or
 * the cursor is not one a trampoline could have left. Reads guest memory
 * only: what the guest wrote there can move a TSC, nothing else.
 */
size_t trampolines_batch_tscs(const struct trampolines *tr, const struct guest_mem *gm,
			      uint64_t lo, uint64_t hi, uint64_t *out, size_t max);

/* Called for each record a drain takes, oldest reservation first. */
typedef void (*tramp_record_fn)(void *ctx, const struct et_ring_record *rec);

/*
 * Takes every complete record out of the batch (fn gets each) and frees
 * its slot; records reserved but not yet complete stay reserved. Returns
 * how many records fn got, or -1 when the header is not what we wrote or
 * the cursor is one no trampoline could have left (nothing is read then:
 * the records are lost; the batch is emptied). Then call
 * trampolines_batch_reset().
 */
int64_t trampolines_batch_take(struct trampolines *tr, const struct guest_mem *gm,
			       tramp_record_fn fn, void *ctx);

/* Whether a take would find anything: records, reserved ones, or a
 * header the guest changed. */
bool trampolines_batch_dirty(const struct trampolines *tr, const struct guest_mem *gm);

/* Rewrites the header and lets the batch take up to `capacity` records
 * (at most what fits, fewer while reserved records block its end) before
 * the next full-batch exit. */
void trampolines_batch_reset(struct trampolines *tr, const struct guest_mem *gm,
			     uint64_t capacity);

/* Puts the region's own bytes back (call once no site points here). */
void trampolines_remove(struct trampolines *tr, const struct guest_mem *gm);

void trampolines_free(struct trampolines *tr);

#ifdef __cplusplus
}
#endif

#endif /* TRAMPOLINES_PLACEMENT_H */
