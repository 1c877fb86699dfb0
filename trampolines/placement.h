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
#include "vmm/kvm/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRAMP_SLOT_BYTES 10 /* call rel32 + 5 original bytes */
#define TRAMP_MIN_RECORDS 64

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
	bool installed;
	uint64_t drains;	  /* batches drained (full, and forced) */
	uint64_t full_drains;	  /* of which the guest asked for: one exit each */
};

/*
 * Lays the region out for a kernel of elf_class with room for nr_slots
 * oneshot slots (0 without --oneshot) and at most max_records records
 * (0: as many as fit). 0, or -1 with an error saying why trampolines do
 * not fit.
 */
int trampolines_plan(struct trampolines *tr, const struct tramp_region *region,
		     unsigned elf_class, size_t nr_slots, uint64_t max_records);

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
 * The batch's filled records, or NULL and *n = 0 when the header is not
 * what we wrote (*corrupt set then). Read them, then call
 * trampolines_batch_reset().
 */
const struct et_ring_record *trampolines_batch(struct trampolines *tr,
					       const struct guest_mem *gm, uint64_t *n,
					       bool *corrupt);

/* Empties the batch and lets it hold `capacity` records (at most what
 * fits) before the next drain. */
void trampolines_batch_reset(struct trampolines *tr, const struct guest_mem *gm,
			     uint64_t capacity);

/* Puts the region's own bytes back (call once no site points here). */
void trampolines_remove(struct trampolines *tr, const struct guest_mem *gm);

void trampolines_free(struct trampolines *tr);

#ifdef __cplusplus
}
#endif

#endif /* TRAMPOLINES_PLACEMENT_H */
