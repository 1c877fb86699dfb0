/* SPDX-License-Identifier: MIT */
/*
 * VM exits in the timeline. The vCPU's exit observer records every exit
 * the VMM handles (port I/O, MMIO, the MSRs of --trace-msr, earlytrace
 * hypercalls, HLT, triple faults) as an event on the trace clock, with
 * the guest's rip, into the same host buffer and file stream as the calls
 * (so drop counting and --max-events apply to them too). Recording goes
 * on after a handoff: exits are the VMM's to see whoever traces calls.
 * The trampolines' own drain port is not the guest's doing and is left
 * out.
 */
#ifndef VMM_TRACE_EXIT_EVENTS_H
#define VMM_TRACE_EXIT_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/kvm/vcpu.h"
#include "vmm/trace/recorder.h"
#include "vmm/trace/tramp_mode.h"

#ifdef __cplusplus
extern "C" {
#endif

struct exit_events {
	struct vcpu *vcpu; /* NULL: not observing */
	struct recorder *rec;
	struct tramp_mode *tm; /* its batch is drained before each exit event */
	uint64_t count;	       /* exits recorded */
};

/* Traps the nr_msrs MSRs (--trace-msr) and, unless no_exits, starts
 * observing the vCPU's exits. 0, or -1 with an error. */
int exit_events_attach(struct exit_events *x, struct vcpu *vcpu, struct recorder *rec,
		       struct tramp_mode *tm, const uint32_t *msrs, size_t nr_msrs,
		       bool no_exits);

/* Stops observing (the tracer is about to close its file). */
void exit_events_detach(struct exit_events *x);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_EXIT_EVENTS_H */
