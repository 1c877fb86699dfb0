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

struct tracer;

/* Traps the --trace-msr MSRs and starts observing exits (unless
 * --no-exits). 0, or -1 with an error. */
int exit_events_attach(struct tracer *t);

/* Stops observing (the tracer is about to close its file). */
void exit_events_detach(struct tracer *t);

#endif /* VMM_TRACE_EXIT_EVENTS_H */
