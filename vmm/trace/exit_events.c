/* SPDX-License-Identifier: MIT */
#include "vmm/trace/exit_events.h"

#include <string.h>

#include "vmm/error.h"
#include "vmm/kvm/msr_trap.h"
#include "vmm/trace/tracer.h"
#include "vmm/trace/tramp_mode.h"

/* An earlytrace hypercall: its number and the result the VMM wrote, read
 * back from the guest's block (the port carries only its address). */
static void as_hypercall(struct tracer *t, struct et_exit *x)
{
	const struct et_hypercall *hc = NULL;
	uint32_t paddr = (uint32_t)x->value;

	if (x->size == 4 && paddr % _Alignof(struct et_hypercall) == 0)
		hc = guest_mem_ptr(&t->m->vm.mem, paddr, sizeof(*hc));
	x->kind = ET_REC_HYPERCALL;
	x->addr = hc ? hc->nr : 0;
	x->value = hc ? (uint64_t)hc->result : (uint64_t)(int64_t)ET_E_INVAL;
	x->size = 0;
	x->write = 1;
}

/* Whether the trampoline batch needs a drain now: it holds calls, or
 * --max-events must shrink its allowance by this event. */
static bool batch_pending(struct tracer *t)
{
	uint64_t n;
	bool corrupt;

	if (!t->tramp.installed)
		return false;
	trampolines_batch(&t->tramp, &t->m->vm.mem, &n, &corrupt);
	return n || corrupt || t->o->max_events;
}

static void record_exit(void *ctx, struct vcpu *vcpu, const struct et_exit *exit)
{
	struct tracer *t = ctx;
	struct et_exit x = *exit;
	struct kvm_regs regs;
	struct et_ring_record ev;

	if (x.kind == ET_REC_PIO && x.addr == ET_PORT_TRAMP_DRAIN)
		return;
	if (x.kind == ET_REC_PIO && x.addr == ET_PORT_HYPERCALL && x.write)
		as_hypercall(t, &x);
	/* Calls still in the trampoline batch happened before this exit:
	 * they go first, so the stream stays in time order. */
	if (t->capturing && batch_pending(t))
		tramp_mode_drain(t);
	if (vcpu_get_regs(vcpu, &regs, NULL))
		regs.rip = 0;
	ev = et_exit_pack(tracer_guest_tsc(vcpu), regs.rip, &x);
	t->exit_events++;
	tracer_record(t, &ev);
}

int exit_events_attach(struct tracer *t)
{
	struct vcpu *vcpu = &t->m->vcpu;

	if (t->o->nr_trace_msrs &&
	    msr_trap_enable(&t->m->vm, t->o->trace_msrs, t->o->nr_trace_msrs))
		return et_error_prefix("--trace-msr");
	if (t->o->no_exits)
		return 0;
	vcpu->observe_exit = record_exit;
	vcpu->observe_exit_ctx = t;
	return 0;
}

void exit_events_detach(struct tracer *t)
{
	if (t->m && t->m->vcpu.observe_exit == record_exit) {
		t->m->vcpu.observe_exit = NULL;
		t->m->vcpu.observe_exit_ctx = NULL;
	}
}
