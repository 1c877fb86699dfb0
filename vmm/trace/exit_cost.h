/* SPDX-License-Identifier: MIT */
/*
 * What the tracer's breakpoint exits cost the guest beyond the VMM's own
 * work, measured while the tracer runs, for the trace file's OVERHEAD
 * record (the reports take it out of durations: vmm/trace/overhead.h).
 * A round trip into the guest and back is timed with an int3 at the
 * guest's first instruction before it runs, then again at breakpoint exits
 * of the run, where the guest runs as it will (its paging, its caches).
 * The host load that stays in the durations is measured too: how long the
 * vCPU's thread waited for a host CPU.
 */
#ifndef VMM_TRACE_EXIT_COST_H
#define VMM_TRACE_EXIT_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/kvm/vcpu.h"
#include "vmm/mem/guest_mem.h"

/* Round trips timed at breakpoint exits: every exit until the array
 * holds EXIT_COST_FIRST, then every rest_every-th, which doubles
 * whenever the array fills and every other sample is dropped: samples
 * spread over the whole run, in bounded memory. */
#define EXIT_COST_SAMPLES 256
#define EXIT_COST_FIRST 31
#define EXIT_COST_EVERY 64
#define EXIT_COST_OUTLIER 4 /* samples over 4x the median are a host's wait */

struct exit_cost {
	/* The round trip in host TSC ticks: timed at the start
	 * (exits_timed: it could be), then the mean of the run's samples up
	 * to EXIT_COST_OUTLIER times their median (exit_cost_finish): the
	 * guest sees every exit's cost, slow ones too, but a sample many
	 * times the median held a wait for a host CPU that KVM reports only
	 * at the next entry, which would put whole call trees at zero. A
	 * sample during which the thread was seen to wait is not kept. */
	uint64_t exit_rest_ticks;
	bool exits_timed;
	uint64_t rest_samples[EXIT_COST_SAMPLES];
	unsigned nr_rest_samples;
	uint64_t rest_every;	 /* breakpoint exits between two samples, after the first */
	uint64_t rest_timed;	 /* round trips timed in all */
	/* How long this (the vCPU's) thread had waited for a host CPU when
	 * the guest started (host_wait_known: the host says). */
	uint64_t host_wait_ns;
	bool host_wait_known;
	uint64_t waited_ns;	 /* and over the run (exit_cost_finish) */
	bool waited_known;
};

/* Before the guest's first instruction: the round trip the KVM probe
 * timed in its scratch VM (vmm/kvm/kvm_traits.h), the guest's own code
 * untouched; only where the guest's TSC is the host's plus an offset (the
 * host's ticks are then the guest's) and int3s exit at all. */
void exit_cost_time_at_start(struct exit_cost *c, struct vcpu *vcpu);
/* The last thing before the run, on the thread that will run the vCPU:
 * its wait for a host CPU so far. */
void exit_cost_start_waiting(struct exit_cost *c);

/* At a breakpoint exit whose int3 is still in place and whose registers
 * are unchanged (exits: the breakpoint exits before it): the round trip
 * timed once more, when a sample is due. False when the run must stop
 * (the exit ended elsewhere: the stop is requested, with an error). */
bool exit_cost_time_again(struct exit_cost *c, struct vcpu *vcpu, const struct kvm_regs *regs,
			  uint64_t exits);

/* After the run, before the trace file is finished: the run's mean
 * round trip (outliers left out) (when it was timed in the run) and the thread's wait over
 * the run. */
void exit_cost_finish(struct exit_cost *c);

#endif /* VMM_TRACE_EXIT_COST_H */
