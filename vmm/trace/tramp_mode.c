/* SPDX-License-Identifier: MIT */
#include "vmm/trace/tramp_mode.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vmm/error.h"
#include "vmm/trace/tracer.h"

/* How many records the batch may take before its next drain: all it holds,
 * or just what --max-events still wants, so a drain lands on the limit. */
static uint64_t batch_allowance(const struct tracer *t)
{
	uint64_t left;

	if (!t->o->max_events)
		return t->tramp.capacity;
	left = t->buf.recorded < t->o->max_events ? t->o->max_events - t->buf.recorded : 0;
	return left < t->tramp.capacity ? left : t->tramp.capacity;
}

/* The site a drained record's return address belongs to. The code ran at
 * the kernel's virtual addresses, or before paging at physical ones (the
 * same bytes: routing required one offset for the site and the region). */
static struct patched_site *site_of(struct tracer *t, uint64_t ret)
{
	uint64_t ip = ret - SITE_LEN, mask = t->tramp.tpl->word_bytes == 4 ? 0xffffffffu : ~0ull;
	struct patched_site *s = site_patches_find(&t->patches, (ip - t->tramp.virt_offset) & mask);

	return s ? s : site_patches_find(&t->patches, ip & mask);
}

void tramp_mode_drain(struct tracer *t)
{
	const struct guest_mem *gm = &t->m->vm.mem;
	uint64_t n, mask = t->tramp.tpl && t->tramp.tpl->word_bytes == 4 ? 0xffffffffu : ~0ull;
	const struct et_ring_record *recs;
	bool corrupt;

	if (!t->tramp.installed)
		return;
	recs = trampolines_batch(&t->tramp, gm, &n, &corrupt);
	/* Callers drain before every exit event to keep order: an empty batch
	 * needs no reset and is not a drain. */
	if (!corrupt && n == 0)
		return;
	if (corrupt) {
		t->tramp_corrupt++;
		trace_writer_mark(t->out, tracer_guest_tsc(&t->m->vcpu),
				  "trampoline batch header overwritten by the guest: the events "
				  "in it are lost");
	}
	for (uint64_t i = 0; i < n; i++) {
		struct patched_site *site = site_of(t, recs[i].ip);
		struct et_ring_record ev = {
			.tsc = recs[i].tsc,
			.ip = site ? site->vaddr : (recs[i].ip - SITE_LEN) & mask,
			.parent_ip = recs[i].parent_ip & mask,
			.cpu = t->m->vcpu.id,
			.kind = ET_REC_CALL,
			.flags = ET_REC_SRC_TRAMPOLINE,
		};

		if (site) {
			site->hits++;
			if (t->o->oneshot) /* the trampoline restored it */
				site_patches_forget(&t->patches, site);
		} else {
			t->tramp_unknown_ip++;
		}
		t->tramp_events++;
		tracer_record(t, &ev);
	}
	t->tramp.drains++;
	trampolines_batch_reset(&t->tramp, gm, batch_allowance(t));
}

/* The guest's trampoline found its batch full. */
static void drain_port(void *opaque, uint64_t offset, uint8_t *data, uint32_t len,
		       bool is_write)
{
	struct tracer *t = opaque;

	(void)offset;
	if (!is_write) {
		memset(data, 0xff, len);
		return;
	}
	if (!t->capturing || !t->tramp.installed)
		return; /* a stray write after handoff: nothing to drain */
	t->tramp.full_drains++;
	tramp_mode_drain(t);
}

/* Why trampolines are not used, said once; an error in trampoline mode. */
static int no_trampolines(struct tracer *t)
{
	if (t->o->mode == TRACE_MODE_TRAMPOLINE)
		return et_error_prefix("--mode trampoline");
	fprintf(stderr, "earlytrace: trampolines: %s; using breakpoints\n", et_last_error());
	et_clear_error();
	return 0;
}

int tramp_mode_attach(struct tracer *t)
{
	struct machine *m = t->m;
	struct tramp_region region;
	size_t routed = 0, slots = t->o->oneshot ? t->patches.nr : 0;

	if (t->o->mode == TRACE_MODE_INT3 || !t->patches.nr)
		return 0;
	if (tramp_region_find(&region, &m->kernel, &m->symbols) ||
	    trampolines_plan(&t->tramp, &region, m->kernel.elf_class, slots, t->o->batch_events))
		return no_trampolines(t);
	if (trampolines_install(&t->tramp, &m->vm.mem) ||
	    iobus_register(&m->vm.bus, IOBUS_PIO, ET_PORT_TRAMP_DRAIN, 1, drain_port, t,
			   "earlytrace trampoline drain"))
		return -1;
	for (size_t i = 0; i < t->patches.nr; i++)
		routed += trampolines_route(&t->tramp, &t->patches.sites[i], t->o->oneshot,
					    &m->vm.mem);
	trampolines_batch_reset(&t->tramp, &m->vm.mem, batch_allowance(t));
	if (routed < t->patches.nr)
		fprintf(stderr,
			"earlytrace: trampolines: %zu of %zu sites cannot reach %s; they use "
			"breakpoints\n",
			t->patches.nr - routed, t->patches.nr, t->tramp.region.desc);
	return 0;
}

void tramp_mode_detach(struct tracer *t)
{
	trampolines_remove(&t->tramp, &t->m->vm.mem);
}
