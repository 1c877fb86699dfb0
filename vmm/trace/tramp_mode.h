/* SPDX-License-Identifier: MIT */
/*
 * The tracer's side of trampoline mode: choosing the region, routing the
 * sites to the trampolines, and draining the guest's batch into the host
 * buffer (when the guest asks on ET_PORT_TRAMP_DRAIN, and before anything
 * that must see every event so far: --until, the handoff, the end).
 */
#ifndef VMM_TRACE_TRAMP_MODE_H
#define VMM_TRACE_TRAMP_MODE_H

struct tracer;

/* After the sites are chosen and before they are armed: installs the
 * trampolines and routes every site they can reach, as the mode says.
 * 0, or -1 with an error. */
int tramp_mode_attach(struct tracer *t);

/* Moves the batch's events into the host buffer and empties it. */
void tramp_mode_drain(struct tracer *t);

/* After the sites are restored: removes the trampolines. */
void tramp_mode_detach(struct tracer *t);

#endif /* VMM_TRACE_TRAMP_MODE_H */
