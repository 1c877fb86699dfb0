/* SPDX-License-Identifier: MIT */
#include "vmm/trace/host_waits.h"

#include "vmm/machine.h"

/*
 * KVM refreshes the steal-time area as it enters the guest, so a wait
 * learnt at this exit happened after the guest's last entry of the
 * previous KVM_RUN: at the end of that KVM_RUN (on its way out), in the
 * VMM's handling of that exit (before or after it read the TSC of the
 * event it recorded), or in this KVM_RUN. The stretch long enough to
 * hold it says where (a wait is a host time slice, a stretch without one
 * microseconds); the wait's TSC is put just before the first event after
 * it, so that it comes out of that event's time on. Host TSC ticks are
 * the guest's plus KVM's offset (vcpu_guest_tsc_is_free).
 */
static uint64_t wait_tsc(struct vcpu *vcpu, uint64_t ticks, bool during_exit)
{
	uint64_t handled = vcpu->prev_exit_host_tsc, entered = vcpu->run_host_tsc;
	uint64_t read = vcpu->tsc_read_host_tsc, now = vcpu_guest_tsc(vcpu);

	if (during_exit || !vcpu_guest_tsc_is_free(vcpu) || !vcpu->prev_run_host_tsc)
		return now;
	if (vcpu->exit_host_tsc - entered >= ticks) /* this KVM_RUN */
		return now;
	if (entered - handled >= ticks) {
		/* The handling: before the TSC it read, if it read one and
		 * the wait fits before that. */
		if (read >= handled && read <= entered && read - handled >= ticks)
			return handled + vcpu->tsc_offset;
		return entered + vcpu->tsc_offset;
	}
	if (handled - vcpu->prev_run_host_tsc >= ticks) /* the previous KVM_RUN */
		return handled + vcpu->tsc_offset;
	return now;
}

static void on_wait(void *ctx, struct vcpu *vcpu, uint64_t waited_ns, bool during_exit)
{
	struct host_waits *hw = ctx;
	unsigned __int128 t = (unsigned __int128)waited_ns * hw->rec->tsc_khz / 1000000u;
	uint64_t tsc = wait_tsc(vcpu, t > UINT64_MAX ? UINT64_MAX : (uint64_t)t, during_exit);
	uint64_t since, ticks;

	if (!tsc || vcpu->id >= VM_MAX_VCPUS)
		return;
	/* The thread cannot have waited longer than the guest's TSC ran
	 * since the last wait was recorded (what the guest writes into its
	 * own steal-time area is not trusted further than that). */
	since = tsc > hw->from[vcpu->id] ? tsc - hw->from[vcpu->id] : 0;
	ticks = t > since ? since : (uint64_t)t;
	hw->from[vcpu->id] = tsc;
	if (!ticks)
		return;
	if (during_exit) {
		/* In this exit's own handling: its charge leaves it out. */
		vcpu->stretch_waited_ticks += ticks;
		hw->uncharged += ticks;
	} else if (vcpu->last_charge && vcpu->last_charge_ticks >= ticks &&
		   vcpu->last_charge->ticks >= ticks) {
		/* The previous exit's user-space stretch was long enough to
		 * hold the wait: it was there, and charged. */
		vcpu->last_charge->ticks -= ticks;
		hw->uncharged += ticks;
	}
	trace_writer_wait(hw->rec->out,
			  &(struct trace_wait){ .tsc = tsc, .cpu = vcpu->id, .ticks = ticks });
	hw->count++;
	hw->ticks += ticks;
}

void host_waits_attach(struct host_waits *hw, struct machine *m, struct recorder *rec,
		       uint64_t origin_tsc)
{
	hw->rec = rec;
	if (!rec->tsc_khz || !rec->out)
		return;
	for (unsigned i = 0; i < m->nr_cpus && i < VM_MAX_VCPUS; i++) {
		struct vcpu *v = machine_vcpu(m, i);

		hw->from[i] = origin_tsc;
		host_wait_rebase(v); /* from the guest's first instruction on */
		v->on_wait = on_wait;
		v->on_wait_ctx = hw;
	}
}

void host_waits_detach(struct host_waits *hw, struct machine *m)
{
	for (unsigned i = 0; i < m->nr_cpus && i < VM_MAX_VCPUS; i++) {
		struct vcpu *v = machine_vcpu(m, i);

		if (v->on_wait_ctx == hw) {
			v->on_wait = NULL;
			v->on_wait_ctx = NULL;
		}
	}
}
