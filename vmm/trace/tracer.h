/* SPDX-License-Identifier: MIT */
/*
 * The tracer: records the guest's function calls from its first
 * instruction and hands over to the guest. It owns the sites and puts the
 * parts together; each part owns its state:
 *  - recorder.h     every event's path: host buffer, trace file, drops;
 *  - site_patch.h   the patched sites;
 *  - tramp_mode.h   trampoline mode: each site calls a trampoline in
 *                   guest memory that records into a batch there; one
 *                   exit drains a full batch (trampolines/). Sites the
 *                   trampolines cannot reach keep an int3 (breakpoint
 *                   mode: a VM exit per call, recorded here);
 *  - exit_events.h  VM exits in the timeline;
 *  - graph.h        --graph: returns;
 *  - handoff.h      the guestlib ring and the stock kernel's symbol;
 *  - flight_recorder.h  the last events and the stack when a run ends
 *                   badly, and the hang watchdog.
 */
#ifndef VMM_TRACE_TRACER_H
#define VMM_TRACE_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/machine/machine.h"
#include "vmm/sites/filter.h"
#include "vmm/sites/sites.h"
#include "vmm/trace/exit_cost.h"
#include "vmm/trace/exit_events.h"
#include "vmm/trace/flight_recorder.h"
#include "vmm/trace/graph.h"
#include "vmm/trace/handoff.h"
#include "vmm/trace/host_waits.h"
#include "vmm/trace/kernel_ring.h"
#include "vmm/trace/recorder.h"
#include "vmm/trace/site_patch.h"
#include "vmm/trace/tramp_mode.h"

struct trace_options {
	struct run_options run;
	const char **filters, **notrace;
	size_t nr_filters, nr_notrace;
	const char *output;	   /* the trace file */
	uint64_t buf_size;	   /* bytes of host buffer */
	enum overflow_policy overflow;
	bool oneshot;		   /* each site records its first call only */
	const char *until;	   /* stop the run when this function is called */
	uint64_t max_events;	   /* stop after this many; 0: no limit */
	const char *handoff;	   /* stock kernels: restore sites when reached */
	enum trace_mode mode;
	uint64_t batch_events;	   /* trampoline batch size; 0: as many as fit */
	bool no_exits;		   /* --no-exits: calls only, no VM exit events */
	uint32_t trace_msrs[16];   /* --trace-msr: MSRs whose accesses exit to us */
	size_t nr_trace_msrs;
	uint64_t tail;		   /* --tail: events the flight recorder prints */
	double hang_timeout_s;	   /* --hang-timeout: 0 none */
	bool graph;		   /* --graph: record returns too */
	bool follow;		   /* --follow: on into the kernel's own ftrace ring */
	bool no_fill;		   /* --no-fill: leave the early calls out of that ring */
	uint64_t kernel_buf_size;  /* --kernel-buf-size: the kernel's ring, per CPU */
	double follow_period_s;	   /* --follow-period: between reads of it */
	const char *expect;	   /* --expect FILE: check the trace (cmd/trace.c) */
};

struct tracer {
	struct machine *m;
	const struct trace_options *o;
	struct site_table sites;
	struct site_filter filter;
	struct site_selection selection;
	struct site_patches patches;
	struct recorder rec;
	struct tramp_mode tramp;
	struct exit_events exits;
	struct graph graph;
	struct handoff handoff;
	struct kernel_ring kring;  /* --follow */
	struct flight_recorder fr;
	bool capturing;		 /* the VMM records calls */
	const char *handoff_how; /* "guest ring", "ftrace_init", NULL: none */
	uint64_t bp_events;	 /* calls recorded at breakpoints */
	/* The tracer's own cost (vmm/trace/overhead.h): its breakpoint exits'
	 * user-space time, and what an exit costs beyond it. */
	struct exit_charge bp_charge;
	struct exit_cost cost;
	struct host_waits waits; /* each wait, as WAIT records */
	bool has_origin;	 /* origin_tsc was read */
	uint64_t origin_tsc;	 /* the guest TSC at its first instruction */
};

/* Finds and selects sites, opens the trace file and patches the guest;
 * the machine must not have run yet. 0, or -1 with an error. */
int tracer_attach(struct tracer *t, struct machine *m, const struct trace_options *o);

/* Stops host-side capture and puts every site, and the trampoline
 * region, back as the image has them. `how` names a handoff (NULL: the
 * run ended). Returns how many sites were patched. */
size_t tracer_stop_capture(struct tracer *t, const char *how);

/* Capture again over what the sites hold now (--follow, once ftrace_init
 * has made them nops). Returns how many sites were armed. */
size_t tracer_resume_capture(struct tracer *t);

/* After the run: collects what is left (flight-recorder buffer, the guest
 * ring) and closes the trace file. 0, or -1 with an error (a write that
 * failed). */
int tracer_finish(struct tracer *t);

/* The run in a few lines: events by kind and source, drops, the handoff,
 * the trampolines, refusals. `where` says where the trace went ("written
 * to FILE"). */
void tracer_print_summary(const struct tracer *t, FILE *out, const char *where);

/* For the progress line (struct progress_sample, vmm/trace/progress.h):
 * the counters so far, read from another thread while the guest runs. */
struct progress_sample;
void tracer_progress_sample(void *tracer, struct progress_sample *s);

void tracer_free(struct tracer *t);

#endif /* VMM_TRACE_TRACER_H */
