/* SPDX-License-Identifier: MIT */
#include "vmm/trace/exit_events.h"

#include <string.h>

#include "vmm/kvm/msr_trap.h"
#include "vmm/util/error.h"

/* An earlytrace hypercall: its number and the result the VMM wrote, read
 * back from the guest's block (the port carries only its address). */
static void as_hypercall(const struct guest_mem *gm, struct et_exit *x)
{
	const struct et_hypercall *hc = NULL;
	uint32_t paddr = (uint32_t)x->value;

	if (x->size == 4 && paddr % _Alignof(struct et_hypercall) == 0)
		hc = guest_mem_ptr(gm, paddr, sizeof(*hc));
	x->kind = ET_REC_HYPERCALL;
	x->addr = hc ? hc->nr : 0;
	x->value = hc ? (uint64_t)hc->result : (uint64_t)(int64_t)ET_E_INVAL;
	x->size = 0;
	x->write = 1;
}

static void record_exit(void *ctx, struct vcpu *vcpu, const struct et_exit *exit)
{
	struct exit_events *xe = ctx;
	struct et_exit x = *exit;
	struct kvm_regs regs;
	struct et_ring_record ev;

	if (x.kind == ET_REC_PIO && x.addr == ET_PORT_TRAMP_DRAIN)
		return;
	if (x.kind == ET_REC_PIO && x.addr == ET_PORT_HYPERCALL && x.write)
		as_hypercall(&vcpu->vm->mem, &x);
	/* Calls still in the trampoline batch happened before this exit:
	 * they go first, so the stream stays in time order. */
	tramp_mode_drain_before_event(xe->tm);
	if (vcpu_get_regs(vcpu, &regs, NULL))
		arch_regs_set_ip(&regs, 0);
	ev = et_exit_pack(recorder_now(xe->rec), arch_regs_ip(&regs), &x);
	xe->count++;
	recorder_record(xe->rec, &ev);
}

int exit_events_attach(struct exit_events *xe, struct vcpu *vcpu, struct recorder *rec,
		       struct tramp_mode *tm, const uint32_t *msrs, size_t nr_msrs,
		       bool no_exits)
{
	memset(xe, 0, sizeof(*xe));
	xe->rec = rec;
	xe->tm = tm;
	if (nr_msrs && msr_trap_enable(vcpu->vm, msrs, nr_msrs))
		return et_error_prefix("--trace-msr");
	if (no_exits)
		return 0;
	xe->vcpu = vcpu;
	vcpu->observe_exit = record_exit;
	vcpu->observe_exit_ctx = xe;
	return 0;
}

void exit_events_detach(struct exit_events *xe)
{
	if (xe->vcpu && xe->vcpu->observe_exit == record_exit) {
		xe->vcpu->observe_exit = NULL;
		xe->vcpu->observe_exit_ctx = NULL;
	}
	xe->vcpu = NULL;
}
