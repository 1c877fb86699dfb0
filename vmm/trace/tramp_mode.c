/* SPDX-License-Identifier: MIT */
#include "vmm/trace/tramp_mode.h"

#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "trampolines/templates.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/kvm_traits.h"
#include "vmm/machine/machine.h"
#include "vmm/util/error.h"

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

/* A site the kernel ran at another alias of its code (the i386 test
 * kernel's higher half): where the page tables map the address now. The
 * batch drains while the kernel still runs there (at its next exit), and
 * the kernel's mappings are the same on every vCPU, so the exiting
 * vCPU's (or, after the run, the boot vCPU's) tables say. */
static struct patched_site *site_through_paging(struct tramp_mode *tm, uint64_t ip)
{
	struct vcpu *v = vcpu_current() ? vcpu_current() : tm->boot_vcpu;
	struct patched_site *s = NULL;
	struct kvm_sregs sregs;
	struct arch_paging pg;
	uint64_t pa;

	if (!v || vcpu_get_sregs(v, &sregs))
		return NULL;
	pg = arch_paging_of(&sregs);
	if (arch_translate(tm->gm, &pg, ip, &pa, NULL) == 0)
		s = site_patches_find(tm->patches, pa);
	et_clear_error();
	return s;
}

/* The site a drained record's return address belongs to. The code ran at
 * the kernel's virtual addresses, or before paging at physical ones (the
 * same bytes: routing required one offset for the site and the region),
 * or at another alias the page tables map to the site. */
static struct patched_site *site_of(struct tramp_mode *tm, uint64_t ret, uint64_t mask)
{
	uint64_t ip = ret - ARCH_SITE_LEN;
	struct patched_site *s =
		site_patches_find(tm->patches, (ip - tm->tramp.virt_offset) & mask);

	if (!s)
		s = site_patches_find(tm->patches, ip & mask);
	return s ? s : site_through_paging(tm, ip & mask);
}

/* One call a trampoline recorded: ret is the return address its site's
 * call pushed. */
static void record_call(struct tramp_mode *tm, uint64_t tsc, uint64_t ret, uint64_t parent)
{
	uint64_t mask = tm->tramp.tpl && tm->tramp.tpl->word_bytes == 4 ? 0xffffffffu : ~0ull;
	struct patched_site *site = site_of(tm, ret & mask, mask);
	struct et_ring_record ev = {
		.tsc = tsc,
		.ip = site ? site->vaddr : ((ret & mask) - ARCH_SITE_LEN) & mask,
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

/* vCPU cpu's batch (the first with one vCPU, or for a vCPU it has not). */
static struct trampolines *batch_of(struct tramp_mode *tm, unsigned cpu)
{
	return cpu && cpu <= tm->nr_more ? &tm->more[cpu - 1] : &tm->tramp;
}

/* The vCPU whose exit the VMM handles in this thread, or NULL. */
static struct vcpu *exiting_vcpu(void)
{
	return vcpu_current();
}

static void drain_batch(struct tramp_mode *tm, unsigned cpu)
{
	struct trampolines *tr = batch_of(tm, cpu);

	if (!tr->installed)
		return;
	/* Callers drain before every exit event to keep order: an untouched
	 * batch needs no reset and is not a drain. */
	if (!trampolines_batch_dirty(tr, tm->gm))
		return;
	tm->cpu = cpu;
	if (trampolines_batch_take(tr, tm->gm, take_record, tm) < 0) {
		tm->corrupt++;
		recorder_mark_now(tm->rec, "trampoline batch header overwritten by the guest: the "
					   "events in it are lost");
	}
	tm->tramp.drains++; /* counted for all batches on the first */
	trampolines_batch_reset(tr, tm->gm, batch_allowance(tm));
}

void tramp_mode_drain_all(struct tramp_mode *tm)
{
	for (unsigned i = 0; i <= tm->nr_more; i++)
		drain_batch(tm, i);
}

/* Another vCPU's batch is its own while it runs (a reset would race its
 * xadd): in an exit only the exiting vCPU's is drained; the rest are at
 * their own exits and when the run ends. */
void tramp_mode_drain(struct tramp_mode *tm)
{
	struct vcpu *v = exiting_vcpu();

	if (v)
		drain_batch(tm, v->id);
	else
		tramp_mode_drain_all(tm);
}

unsigned tramp_mode_pending(const struct tramp_mode *tm)
{
	unsigned n = tm->tramp.nr_pending;

	for (unsigned i = 0; i < tm->nr_more; i++)
		n += tm->more[i].nr_pending;
	return n;
}

void tramp_mode_drain_before_event(struct tramp_mode *tm)
{
	struct vcpu *v = exiting_vcpu();
	struct trampolines *tr = batch_of(tm, v ? v->id : 0);

	if (!tr->installed)
		return;
	if (trampolines_batch_dirty(tr, tm->gm))
		tramp_mode_drain(tm);
	else if (tm->rec->max_events)
		trampolines_batch_reset(tr, tm->gm, batch_allowance(tm));
}

/* The guest's trampoline found its batch full: drain, then record the
 * call that found it full, which the trampoline passes in registers
 * (ET_TB_DRAIN_RECORD: tsc in ebx:ecx, its site + 5 in esi, the parent in
 * edi). Any other write only drains. */
static void drain_port(void *opaque, uint64_t offset, uint8_t *data, uint32_t len,
		       bool is_write)
{
	struct tramp_mode *tm = opaque;
	struct vcpu *vcpu = exiting_vcpu() ? exiting_vcpu() : tm->rec->vcpu;
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
	vcpu->charge = &tm->drain_charge;
	drain_batch(tm, vcpu->id);
	/* --max-events reached while draining: the run stops here, and this
	 * call is past the limit. */
	if (!recorder_room(tm->rec))
		return;
	tm->cpu = vcpu->id;
	if (len == 1 && data[0] == ET_TB_DRAIN_RECORD && vcpu_get_regs(vcpu, &regs, NULL) == 0) {
		uint64_t tsc, ret, parent;

		tramp_full_call_from_regs(&regs, &tsc, &ret, &parent);
		record_call(tm, tsc, ret, parent);
	}
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

/* Each vCPU's TSC_AUX holds its index, which the smp trampoline's rdtscp
 * reads to pick its batch (one vCPU: rdtsc, nothing to set). */
static int set_tsc_aux(struct machine *m)
{
	if (m->nr_cpus > 1 && !arch_guest_reads_cpu_id(&m->vcpu))
		return et_error("with %u vCPUs (--cpus) trampolines need RDTSCP, which KVM here "
				"does not offer the guest", m->nr_cpus);
	for (unsigned i = 0; m->nr_cpus > 1 && i < m->nr_cpus; i++)
		if (arch_set_guest_cpu_id(machine_vcpu(m, i), i))
			return et_error("cannot set vCPU %u's TSC_AUX, which picks its trampoline "
					"batch", i);
	return 0;
}

/* The views of vCPU 1..n-1's batches, each emptied. */
static int add_batches(struct tramp_mode *tm, unsigned n)
{
	if (n < 2)
		return 0;
	tm->more = calloc(n - 1, sizeof(*tm->more));
	if (!tm->more)
		return et_error("out of memory for %u trampoline batches", n);
	tm->nr_more = n - 1;
	for (unsigned i = 1; i < n; i++)
		if (trampolines_batch_view(&tm->tramp, i, &tm->more[i - 1], tm->gm))
			return -1;
	return 0;
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
	tm->boot_vcpu = &m->vcpu;
	tm->cpu = m->vcpu.id;
	tm->oneshot = oneshot;
	if (mode == TRACE_MODE_INT3 || !patches->nr)
		return 0;
	/* --cpus N: a batch per vCPU, which its TSC_AUX picks. */
	if (tramp_region_find(&region, &m->kernel, &m->symbols) ||
	    trampolines_plan_batches(&tm->tramp, &region, m->kernel.elf_class, slots, batch_events,
				     m->nr_cpus) ||
	    set_tsc_aux(m)) {
		if (mode == TRACE_MODE_TRAMPOLINE)
			return et_error_prefix("--mode trampoline");
		if (m->vm.traits && !m->vm.traits->int3_exits)
			return et_error_prefix("nothing can be traced here: %s, and trampolines",
					       m->vm.traits->no_int3);
		et_warn("trampolines: %s; using breakpoints", et_last_error());
		et_clear_error();
		return 0;
	}
	if (trampolines_install(&tm->tramp, tm->gm) || add_batches(tm, m->nr_cpus) ||
	    iobus_register(&m->vm.bus, IOBUS_PIO, ET_PORT_TRAMP_DRAIN, 1, drain_port, tm,
			   "earlytrace trampoline drain"))
		return -1;
	for (size_t i = 0; i < patches->nr; i++)
		routed += tramp_route_site(&tm->tramp, &patches->sites[i], oneshot, tm->gm);
	trampolines_batch_reset(&tm->tramp, tm->gm, batch_allowance(tm));
	tm->placed = true;
	if (routed < patches->nr && m->vm.traits && !m->vm.traits->int3_exits) {
		size_t total = patches->nr, dropped = site_patches_drop_int3(patches);

		if (!patches->nr)
			return et_error("none of the %zu sites can reach %s, and %s", total,
					tm->tramp.region.desc, m->vm.traits->no_int3);
		et_warn("trampolines: %zu of %zu sites cannot reach %s, and %s: those are not "
			"traced",
			dropped, total, tm->tramp.region.desc, m->vm.traits->no_int3);
	} else if (routed < patches->nr) {
		et_warn("trampolines: %zu of %zu sites cannot reach %s; they use breakpoints",
			patches->nr - routed, patches->nr, tm->tramp.region.desc);
	}
	return 0;
}

const volatile uint64_t *tramp_mode_progress(struct tramp_mode *tm, unsigned cpu)
{
	struct trampolines *tr = batch_of(tm, cpu);
	struct et_tramp_batch *b;

	/* A vCPU beyond the batches shares the first: watched there. */
	if (!tr->installed || (cpu && tr == &tm->tramp))
		return NULL;
	b = trampolines_batch_header(tr, tm->gm);
	return b ? (const volatile uint64_t *)&b->cursor : NULL;
}

size_t tramp_mode_batch_tscs(void *ctx, unsigned cpu, uint64_t lo, uint64_t hi, uint64_t *out,
			     size_t max)
{
	struct tramp_mode *tm = ctx;

	return trampolines_batch_tscs(batch_of(tm, cpu), tm->gm, lo, hi, out, max);
}

void tramp_mode_detach(struct tramp_mode *tm)
{
	for (unsigned i = 0; i < tm->nr_more; i++)
		trampolines_remove(&tm->more[i], tm->gm);
	trampolines_remove(&tm->tramp, tm->gm);
}

bool tramp_mode_reattach(struct tramp_mode *tm)
{
	if (!tm->placed || tm->oneshot)
		return false;
	if (!tm->tramp.installed && trampolines_install(&tm->tramp, tm->gm))
		return false;
	for (unsigned i = 1; i <= tm->nr_more; i++)
		if (!tm->more[i - 1].installed &&
		    trampolines_batch_view(&tm->tramp, i, &tm->more[i - 1], tm->gm))
			return false;
	trampolines_batch_reset(&tm->tramp, tm->gm, batch_allowance(tm));
	return true;
}

void tramp_mode_free(struct tramp_mode *tm)
{
	free(tm->more);
	tm->more = NULL;
	tm->nr_more = 0;
	trampolines_free(&tm->tramp);
}
