/* SPDX-License-Identifier: MIT */
/*
 * The guest side of a run: earlytrace's hypercall port (ET_PORT_HYPERCALL),
 * through which a guest linked with guestlib takes over tracing
 * (ET_HC_HANDOFF) or drops a marker in the trace (ET_HC_MARK), and reading
 * the guest's ring at the end. The guest is untrusted: every address,
 * length and index it hands over is checked against guest RAM and the
 * ring's own size before use.
 */
#ifndef VMM_TRACE_HANDOFF_H
#define VMM_TRACE_HANDOFF_H

struct tracer;

/* Registers the hypercall port for this tracer. */
int handoff_attach(struct tracer *t);

/* After the run: appends what the guest recorded in its ring to the trace
 * file, and counts what it lost. Nothing when there was no handoff. */
void handoff_collect_guest_ring(struct tracer *t);

/* After the run: one line on stderr when the guest sent hypercalls the
 * VMM refused (how many of how many, and why the first was). */
void handoff_report(const struct tracer *t);

#endif /* VMM_TRACE_HANDOFF_H */
