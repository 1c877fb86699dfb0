/* SPDX-License-Identifier: MIT */
/*
 * The tracer's summary after a run (tracer_print_summary): a few lines on
 * stderr that count the events by kind and source, the drops, the handoff,
 * the trampolines, what the tracer's exits cost, and whatever the tracer
 * had to refuse. Read-only over the parts' counters.
 */
#include "vmm/trace/tracer.h"

#include <inttypes.h>
#include <stdio.h>

/* Breakpoint hits on several vCPUs at once where the first one's exit
 * removed the int3 (vmm/kvm/guest_debug.c). */
static uint64_t stale_int3(const struct tracer *t)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < t->m->nr_cpus; i++)
		n += __atomic_load_n(&machine_vcpu(t->m, i)->stale_int3, __ATOMIC_RELAXED);
	return n;
}

void tracer_print_summary(const struct tracer *t, FILE *out, const char *where)
{
	const struct tramp_mode *tm = &t->tramp;
	const struct graph *g = &t->graph;
	const struct kernel_ring *kr = &t->kring;
	char waited[288] = "", rest_how[64];

	/* The vocabulary of every report: calls, returns, exits (the VM exits
	 * recorded as events), kernel events (the kernel's own text and raw
	 * events); events are all four. */
	uint64_t calls = t->rec.calls + t->handoff.guest_events;
	uint64_t kernel_events = kr->texts + kr->raw;

	fprintf(out,
		"earlytrace: trace: %" PRIu64 " events: %" PRIu64 " calls, %" PRIu64 " returns, %" PRIu64
		" exits, %" PRIu64 " kernel events; %" PRIu64 " dropped; calls and returns by "
		"source: breakpoints on %zu sites %" PRIu64 ", trampolines on %zu sites %" PRIu64
		", guest ring %" PRIu64 ", kernel's ftrace ring %" PRIu64 "%s%s; %s\n",
		calls + t->rec.returns + t->rec.exits + kernel_events, calls, t->rec.returns,
		t->rec.exits, kernel_events,
		t->rec.buf.dropped + t->handoff.guest_lost + kr->overwritten + kr->not_written,
		t->patches.nr_int3, t->bp_events + t->graph.returns + t->graph.unwound,
		t->patches.nr_call, tm->events, t->handoff.guest_events, kr->calls + kr->returns,
		t->handoff_how ? "; handoff: " : "", t->handoff_how ? t->handoff_how : "", where);
	if (t->o->follow) {
		char fill[320];

		if (t->o->no_fill || !kr->fill_tried)
			snprintf(fill, sizeof(fill), "%s",
				 t->o->no_fill ? "not written into it (--no-fill)" : "not written into it");
		else if (kr->fill_skipped[0] && !kr->filled)
			snprintf(fill, sizeof(fill), "not written into it (%s)", kr->fill_skipped);
		else
			snprintf(fill, sizeof(fill),
				 "%" PRIu64 " written into it, %" PRIu64 " of them too old to fit%s%s%s",
				 kr->filled + kr->fill_overrun, kr->fill_overrun,
				 kr->fill_readback_mismatches ? ", read back NOT as written" : "",
				 kr->fill_skipped[0] ? "; a later vCPU's not: " : "", kr->fill_skipped);
		fprintf(out,
			"earlytrace: follow: %s; the early calls%s: %s; the kernel's ring: %" PRIu64
			" calls, %" PRIu64 " returns, %" PRIu64 " texts, %" PRIu64 " other events in %" PRIu64
			" reads (%.1f us of VMM time a read, at most %" PRIu64
			" events in one); %" PRIu64 " overwritten before a read, %" PRIu64
			" not written by the kernel%s%s\n",
			kr->reader ? "the kernel's tracer took over"
				   : "the kernel's tracer never took over",
			t->o->graph ? " and returns" : "", fill, kr->calls, kr->returns, kr->texts, kr->raw, kr->reads,
			kr->reads ? (double)kr->read_ns / (double)kr->reads / 1000.0 : 0.0,
			kr->read_events_max, kr->overwritten, kr->not_written,
			kr->warnings ? "; " : "", kr->warnings ? kr->first_warning : "");
	}
	if (t->patches.nr_call)
		fprintf(out,
			"earlytrace: trampolines: %s, %" PRIu64 " records a batch%s, %" PRIu64
			" drains (%" PRIu64 " asked for by the guest)\n",
			tm->tramp.region.desc, tm->tramp.capacity,
			tm->nr_more ? " (a batch per vCPU)" : "", tm->tramp.drains,
			tm->tramp.full_drains);
	/* Host load the durations keep: the time the guest's TSC ran while
	 * this thread waited for a host CPU. */
	if (t->waits.count && t->rec.tsc_khz) {
		char spread[96] = "";

		if (t->waits.spread)
			snprintf(spread, sizeof(spread),
				 "; %" PRIu64 " learnt at an exit placed between the calls the "
				 "guest recorded",
				 t->waits.spread);
		snprintf(waited, sizeof(waited),
			 "; the vCPU threads waited %.1f ms for a host CPU (other processes ran; "
			 "%" PRIu64 " waits, taken out of the durations%s)",
			 (double)t->waits.ticks / (double)t->rec.tsc_khz, t->waits.count, spread);
	}
	else if (t->cost.waited_known)
		snprintf(waited, sizeof(waited),
			 "; the vCPU thread waited %.1f ms for a host CPU (other processes ran; "
			 "left in the durations)",
			 (double)t->cost.waited_ns / 1e6);
	if (t->cost.nr_rest_samples)
		snprintf(rest_how, sizeof(rest_how), "timed in the run, %" PRIu64 " times",
			 t->cost.rest_timed);
	else
		snprintf(rest_how, sizeof(rest_how), "%s",
			 t->cost.exits_timed ? "timed at start" : "not timed");
	/* The VMM's own work per breakpoint exit, as measured at each. */
	if (t->bp_charge.exits && t->rec.tsc_khz)
		fprintf(out,
			"earlytrace: tracer cost: %" PRIu64 " breakpoint exits, %.2f us each in the "
			"VMM's user space, %.2f us into the guest and back (%s)%s\n",
			t->bp_charge.exits,
			(double)t->bp_charge.ticks / (double)t->bp_charge.exits * 1000.0 /
				(double)t->rec.tsc_khz,
			(double)t->cost.exit_rest_ticks * 1000.0 / (double)t->rec.tsc_khz,
			rest_how, waited);
	else if (waited[0])
		fprintf(out, "earlytrace: host load: %s\n", waited + 2); /* past "; " */
	/* Hardware-independent cost: exits per event is what modes differ in. */
	fprintf(out, "earlytrace: cost: %" PRIu64 " exits to the VMM (every return from KVM_RUN, "
		     "breakpoints included)\n",
		t->m->vcpu.nr_exits);
	if (stale_int3(t))
		fprintf(out,
			"earlytrace: breakpoints: %" PRIu64 " hits found their int3 already removed "
			"by another vCPU's exit (--oneshot, the handoff) and went on at the "
			"instruction, not recorded again\n",
			stale_int3(t));
	if (t->patches.refused || t->patches.modified_by_guest)
		fprintf(out,
			"earlytrace: trace: %zu sites not patched (bytes differed), %zu not restored "
			"(the guest changed them)\n",
			t->patches.refused, t->patches.modified_by_guest);
	/* Calls a trampoline had reserved a record for but not finished when
	 * tracing stopped (the run ended inside a recording, or inside an
	 * interrupt nested in one): they never completed, so they are not in
	 * the trace. */
	if (tramp_mode_pending(tm))
		fprintf(out,
			"earlytrace: trampolines: %u calls were still being recorded when tracing "
			"stopped; they are not in the trace\n",
			tramp_mode_pending(tm));
	if (tm->unknown_ip || tm->corrupt)
		fprintf(out,
			"earlytrace: trampolines: %" PRIu64 " records named no site, %" PRIu64
			" batches were overwritten by the guest\n",
			tm->unknown_ip, tm->corrupt);
	if (t->handoff.bad_hypercalls)
		fprintf(out,
			"earlytrace: hypercalls: %" PRIu64 ", %" PRIu64 " refused (the first: %s)\n",
			t->handoff.hypercalls, t->handoff.bad_hypercalls, t->handoff.first_refusal);
	if (g->enabled)
		fprintf(out,
			"earlytrace: graph: %" PRIu64 " returns, %" PRIu64
			" frames handed back at the end of capture, %" PRIu64
			" not (the guest had changed them), %" PRIu64 " unwound, %" PRIu64
			" calls without a return\n",
			g->returns, g->restored, g->not_restored, g->unwound, g->not_redirected);
}
