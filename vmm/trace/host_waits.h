/* SPDX-License-Identifier: MIT */
/*
 * The trace's WAIT records: each time a vCPU's host thread is found to
 * have waited for a host CPU (vmm/kvm/host_wait.h), one record with the
 * guest TSC of the exit that found it and the wait in guest TSC ticks,
 * so reports can take it out of the durations it fell into
 * (vmm/trace/overhead.h).
 *
 * A wait the thread spent in the VMM's own user-space work for an exit
 * is in that exit's charge too (the tracer's cost, measured from KVM_RUN's
 * return to the next KVM_RUN); it must not be taken out twice. A wait
 * learnt inside an exit's handling (the extra KVM_RUN that times an exit)
 * comes out of that exit's charge; one learnt at the next exit comes out
 * of the previous exit's charge when that stretch was at least as long
 * as the wait (then it can only have been there: a stretch is about a
 * microsecond, a wait a host time slice).
 */
#ifndef VMM_TRACE_HOST_WAITS_H
#define VMM_TRACE_HOST_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/kvm/vm.h"
#include "vmm/trace/recorder.h"

#ifdef __cplusplus
extern "C" {
#endif

struct machine;

/* The guest TSCs of the calls a vCPU recorded itself in [lo, hi], not yet
 * taken by the VMM: up to max into out; returns how many there are. */
typedef size_t (*guest_tscs_fn)(void *ctx, unsigned cpu, uint64_t lo, uint64_t hi,
				uint64_t *out, size_t max);

struct host_waits {
	struct recorder *rec;
	uint64_t from[VM_MAX_VCPUS]; /* each vCPU's guest TSC at its last WAIT */
	uint64_t count, ticks;	     /* recorded (a spread wait counts each piece) */
	uint64_t uncharged;	     /* ticks taken out of the exits' charges */
	/* Trampolines or a guestlib ring: a wait learnt at an exit that fell
	 * in the KVM_RUN itself is spread over the gaps between the calls
	 * the guest recorded in it (wait_spread.h); without, at the exit. */
	guest_tscs_fn guest_tscs;
	void *guest_tscs_ctx;
	uint64_t *scratch; /* their TSCs */
	size_t scratch_max;
	uint64_t spread;   /* waits spread so */
};

/* Watches every vCPU of m from origin_tsc (the guest's first instruction);
 * WAIT records go to rec's trace file. A no-op without a TSC frequency. */
void host_waits_attach(struct host_waits *hw, struct machine *m, struct recorder *rec,
		       uint64_t origin_tsc);
void host_waits_detach(struct host_waits *hw, struct machine *m);

/* Where the guest records calls itself (trampoline batches, guestlib
 * rings): fn finds them, so waits inside a KVM_RUN land between the calls
 * they fell between. */
void host_waits_place_by(struct host_waits *hw, guest_tscs_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_HOST_WAITS_H */
