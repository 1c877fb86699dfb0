/* SPDX-License-Identifier: MIT */
#include "vmm/trace/tramp_mode.h"

#include <string.h>

#include "vmm/error.h"
#include "vmm/machine.h"

int trace_mode_parse(const char *text, enum trace_mode *mode)
{
	static const char *const names[] = {
		[TRACE_MODE_AUTO] = "auto",
		[TRACE_MODE_INT3] = "int3",
		[TRACE_MODE_TRAMPOLINE] = "trampoline",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(text, names[i])) {
			*mode = (enum trace_mode)i;
			return 0;
		}
	return et_error("unknown mode '%s' (auto, int3 or trampoline)", text);
}

/* How many records the batch may take before its next drain: all it holds,
 * or just what --max-events still wants, so a drain lands on the limit. */
static uint64_t batch_allowance(const struct tramp_mode *tm)
{
	uint64_t room = recorder_room(tm->rec);

	return room < tm->tramp.capacity ? room : tm->tramp.capacity;
}

/* The site a drained record's return address belongs to. The code ran at
 * the kernel's virtual addresses, or before paging at physical ones (the
 * same bytes: routing required one offset for the site and the region). */
static struct patched_site *site_of(struct tramp_mode *tm, uint64_t ret, uint64_t mask)
{
	uint64_t ip = ret - X86_SITE_LEN;
	struct patched_site *s =
		site_patches_find(tm->patches, (ip - tm->tramp.virt_offset) & mask);

	return s ? s : site_patches_find(tm->patches, ip & mask);
}

/* One call a trampoline recorded: ret is the return address its site's
 * call pushed. */
static void record_call(struct tramp_mode *tm, uint64_t tsc, uint64_t ret, uint64_t parent)
{
	uint64_t mask = tm->tramp.tpl && tm->tramp.tpl->word_bytes == 4 ? 0xffffffffu : ~0ull;
	struct patched_site *site = site_of(tm, ret & mask, mask);
	struct et_ring_record ev = {
		.tsc = tsc,
		.ip = site ? site->vaddr : ((ret & mask) - X86_SITE_LEN) & mask,
		.parent_ip = parent & mask,
		.cpu = tm->cpu,
		.kind = ET_REC_CALL,
		.flags = ET_REC_SRC_TRAMPOLINE,
	};

	if (site) {
		site->hits++;
		if (tm->oneshot) /* the trampoline restored it */
			site_patches_forget(tm->patches, site);
	} else {
		tm->unknown_ip++;
	}
	tm->events++;
	recorder_record(tm->rec, &ev);
}

static void take_record(void *ctx, const struct et_ring_record *r)
{
	record_call(ctx, r->tsc, r->ip, r->parent_ip);
}

void tramp_mode_drain(struct tramp_mode *tm)
{
	if (!tm->tramp.installed)
		return;
	/* Callers drain before every exit event to keep order: an untouched
	 * batch needs no reset and is not a drain. */
	if (!trampolines_batch_dirty(&tm->tramp, tm->gm))
		return;
	if (trampolines_batch_take(&tm->tramp, tm->gm, take_record, tm) < 0) {
		tm->corrupt++;
		recorder_mark_now(tm->rec, "trampoline batch header overwritten by the guest: the "
					   "events in it are lost");
	}
	tm->tramp.drains++;
	trampolines_batch_reset(&tm->tramp, tm->gm, batch_allowance(tm));
}

void tramp_mode_drain_before_event(struct tramp_mode *tm)
{
	if (!tm->tramp.installed)
		return;
	if (trampolines_batch_dirty(&tm->tramp, tm->gm))
		tramp_mode_drain(tm);
	else if (tm->rec->max_events)
		trampolines_batch_reset(&tm->tramp, tm->gm, batch_allowance(tm));
}

/* The guest's trampoline found its batch full: drain, then record the
 * call that found it full, which the trampoline passes in registers
 * (ET_TB_DRAIN_RECORD: tsc in ebx:ecx, its site + 5 in esi, the parent in
 * edi). Any other write only drains. */
static void drain_port(void *opaque, uint64_t offset, uint8_t *data, uint32_t len,
		       bool is_write)
{
	struct tramp_mode *tm = opaque;
	struct kvm_regs regs;

	(void)offset;
	if (!is_write) {
		memset(data, 0xff, len);
		return;
	}
	if (!tm->tramp.installed)
		return; /* a stray write after handoff: nothing to drain */
	tm->tramp.full_drains++;
	/* An exit only for the tracer: its time is the tracer's cost. */
	tm->rec->vcpu->charge = &tm->drain_charge;
	tramp_mode_drain(tm);
	/* --max-events reached while draining: the run stops here, and this
	 * call is past the limit. */
	if (!recorder_room(tm->rec))
		return;
	if (len == 1 && data[0] == ET_TB_DRAIN_RECORD && vcpu_get_regs(tm->rec->vcpu, &regs, NULL) == 0)
		record_call(tm, (regs.rbx & 0xffffffffu) << 32 | (regs.rcx & 0xffffffffu), regs.rsi,
			    regs.rdi);
}

bool tramp_route_site(struct trampolines *tr, struct patched_site *s, bool oneshot,
		      const struct guest_mem *gm)
{
	uint64_t slot;

	if (s->vaddr - s->paddr != tr->virt_offset)
		return false;
	if (!oneshot)
		return site_patch_set_call(s, trampolines_record_entry(tr));
	if (!trampolines_next_slot(tr, &slot) || !site_patch_set_call(s, slot))
		return false;
	if (trampolines_take_slot(tr, gm, s->orig) == 0)
		return true;
	site_patch_set_int3(s);
	return false;
}

int tramp_mode_attach(struct tramp_mode *tm, enum trace_mode mode, struct machine *m,
		      struct site_patches *patches, struct recorder *rec, bool oneshot,
		      uint64_t batch_events)
{
	struct tramp_region region;
	size_t routed = 0, slots = oneshot ? patches->nr : 0;

	memset(tm, 0, sizeof(*tm));
	tm->patches = patches;
	tm->rec = rec;
	tm->gm = &m->vm.mem;
	tm->cpu = m->vcpu.id;
	tm->oneshot = oneshot;
	if (mode == TRACE_MODE_INT3 || !patches->nr)
		return 0;
	/* One batch with one cursor, no CPU in its records: trampolines
	 * record on one vCPU only so far; breakpoints know their vCPU. */
	if (m->nr_cpus > 1) {
		if (mode == TRACE_MODE_TRAMPOLINE)
			return et_error("--mode trampoline: trampolines record on one vCPU only so "
					"far, and this machine has %u (--cpus); use --mode int3 or "
					"auto", m->nr_cpus);
		et_warn("trampolines: not with %u vCPUs (--cpus) yet; using breakpoints",
			m->nr_cpus);
		return 0;
	}
	if (tramp_region_find(&region, &m->kernel, &m->symbols) ||
	    trampolines_plan(&tm->tramp, &region, m->kernel.elf_class, slots, batch_events)) {
		if (mode == TRACE_MODE_TRAMPOLINE)
			return et_error_prefix("--mode trampoline");
		et_warn("trampolines: %s; using breakpoints", et_last_error());
		et_clear_error();
		return 0;
	}
	if (trampolines_install(&tm->tramp, tm->gm) ||
	    iobus_register(&m->vm.bus, IOBUS_PIO, ET_PORT_TRAMP_DRAIN, 1, drain_port, tm,
			   "earlytrace trampoline drain"))
		return -1;
	for (size_t i = 0; i < patches->nr; i++)
		routed += tramp_route_site(&tm->tramp, &patches->sites[i], oneshot, tm->gm);
	trampolines_batch_reset(&tm->tramp, tm->gm, batch_allowance(tm));
	tm->placed = true;
	if (routed < patches->nr)
		et_warn("trampolines: %zu of %zu sites cannot reach %s; they use breakpoints",
			patches->nr - routed, patches->nr, tm->tramp.region.desc);
	return 0;
}

const volatile uint64_t *tramp_mode_progress(struct tramp_mode *tm)
{
	struct et_tramp_batch *b;

	if (!tm->tramp.installed)
		return NULL;
	b = trampolines_batch_header(&tm->tramp, tm->gm);
	return b ? (const volatile uint64_t *)&b->cursor : NULL;
}

void tramp_mode_detach(struct tramp_mode *tm)
{
	trampolines_remove(&tm->tramp, tm->gm);
}

bool tramp_mode_reattach(struct tramp_mode *tm)
{
	if (!tm->placed || tm->oneshot)
		return false;
	if (!tm->tramp.installed && trampolines_install(&tm->tramp, tm->gm))
		return false;
	trampolines_batch_reset(&tm->tramp, tm->gm, batch_allowance(tm));
	return true;
}

void tramp_mode_free(struct tramp_mode *tm)
{
	trampolines_free(&tm->tramp);
}
