/* SPDX-License-Identifier: MIT */
#include "vmm/trace/host_waits.h"

#include <stdlib.h>

#include "vmm/machine/machine.h"
#include "vmm/trace/wait_spread.h"

/* Pieces a wait is spread over at most: a KVM_RUN of host time slices. */
#define WAIT_MAX_PIECES 64

/*
 * KVM refreshes the steal-time area as it enters the guest, so a wait
 * learnt at this exit happened after the guest's last entry of the
 * previous KVM_RUN: at the end of that KVM_RUN (on its way out), in the
 * VMM's handling of that exit (before or after it read the TSC of the
 * event it recorded), or in this KVM_RUN. The stretch long enough to
 * hold it says where (a wait is a host time slice, a stretch without one
 * microseconds); the wait's TSC is put just before the first event after
 * it, so that it comes out of that event's time on. Host TSC ticks are
 * the guest's plus KVM's offset (vcpu_guest_tsc_is_free). In this KVM_RUN,
 * *run_from is where it began (guest TSC): the guest may have recorded
 * calls since, and the wait fell between two of them.
 */
static uint64_t wait_tsc(struct vcpu *vcpu, uint64_t ticks, bool during_exit, uint64_t *run_from)
{
	uint64_t handled = vcpu->prev_exit_host_tsc, entered = vcpu->run_host_tsc;
	uint64_t read = vcpu->tsc_read_host_tsc, now = vcpu_guest_tsc(vcpu);

	*run_from = 0;
	if (during_exit || !vcpu_guest_tsc_is_free(vcpu) || !vcpu->prev_run_host_tsc)
		return now;
	if (vcpu->exit_host_tsc - entered >= ticks) { /* this KVM_RUN */
		*run_from = entered + vcpu->tsc_offset;
		return now;
	}
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

static void write_wait(struct host_waits *hw, unsigned cpu, uint64_t tsc, uint64_t ticks)
{
	trace_writer_wait(hw->rec->out, &(struct trace_wait){ .tsc = tsc, .cpu = cpu, .ticks = ticks });
	hw->count++;
	hw->ticks += ticks;
}

/* A wait in the KVM_RUN [from, tsc] between calls the guest recorded in
 * it: a WAIT record per gap it stands out in. Returns the ticks placed;
 * *seen: the guest recorded calls in the run (else nothing tells where). */
static uint64_t spread_wait(struct host_waits *hw, unsigned cpu, uint64_t from, uint64_t tsc,
			    uint64_t ticks, bool *seen)
{
	struct wait_piece pieces[WAIT_MAX_PIECES];
	size_t n = hw->guest_tscs(hw->guest_tscs_ctx, cpu, from, tsc, hw->scratch, hw->scratch_max);
	uint64_t placed = 0;

	*seen = n > 0;
	if (n > hw->scratch_max) {
		uint64_t *more = realloc(hw->scratch, n * sizeof(*more));

		if (!more)
			return 0;
		hw->scratch = more;
		hw->scratch_max = n;
		n = hw->guest_tscs(hw->guest_tscs_ctx, cpu, from, tsc, hw->scratch, n);
		if (n > hw->scratch_max) /* the guest recorded more meanwhile: cannot */
			return 0;
	}
	n = wait_spread(hw->scratch, n, from, tsc, ticks, pieces, WAIT_MAX_PIECES);
	for (size_t i = 0; i < n; i++) {
		write_wait(hw, cpu, pieces[i].tsc, pieces[i].ticks);
		placed += pieces[i].ticks;
	}
	hw->spread += n > 0;
	return placed;
}

static void on_wait(void *ctx, struct vcpu *vcpu, uint64_t waited_ns, bool during_exit)
{
	struct host_waits *hw = ctx;
	unsigned __int128 t = (unsigned __int128)waited_ns * hw->rec->tsc_khz / 1000000u;
	uint64_t run_from;
	uint64_t tsc = wait_tsc(vcpu, t > UINT64_MAX ? UINT64_MAX : (uint64_t)t, during_exit,
				&run_from);
	uint64_t since_from, since, ticks;

	if (!tsc || vcpu->id >= VM_MAX_VCPUS)
		return;
	/* The thread cannot have waited longer than the guest's TSC ran
	 * since the last wait was recorded (what the guest writes into its
	 * own steal-time area is not trusted further than that). */
	since_from = hw->from[vcpu->id];
	since = tsc > since_from ? tsc - since_from : 0;
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
	if (run_from && hw->guest_tscs) {
		bool seen;

		/* Between the calls the guest recorded in this KVM_RUN (not
		 * before the vCPU's last WAIT). What they do not show was
		 * before the run's entry (KVM counts the waits up to its last
		 * entry into the guest): at the run's start. Without calls in
		 * the run (trampolines gone), at its end as before. */
		run_from = run_from > since_from ? run_from : since_from;
		ticks -= spread_wait(hw, vcpu->id, run_from, tsc, ticks, &seen);
		if (!ticks)
			return;
		if (seen)
			tsc = run_from;
	}
	write_wait(hw, vcpu->id, tsc, ticks);
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

void host_waits_place_by(struct host_waits *hw, guest_tscs_fn fn, void *ctx)
{
	hw->guest_tscs = fn;
	hw->guest_tscs_ctx = ctx;
}

void host_waits_detach(struct host_waits *hw, struct machine *m)
{
	free(hw->scratch);
	hw->scratch = NULL;
	hw->scratch_max = 0;
	hw->guest_tscs = NULL;
	for (unsigned i = 0; i < m->nr_cpus && i < VM_MAX_VCPUS; i++) {
		struct vcpu *v = machine_vcpu(m, i);

		if (v->on_wait_ctx == hw) {
			v->on_wait = NULL;
			v->on_wait_ctx = NULL;
		}
	}
}
