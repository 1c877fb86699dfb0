/* SPDX-License-Identifier: MIT */
/*
 * The tracer: records the guest's function calls from its first
 * instruction, keeps them in the host buffer and streams them to the trace
 * file, and hands over to the guest. Two ways to see a call:
 *  - breakpoint mode: an int3 per selected site, a VM exit per call;
 *  - trampoline mode: each site calls a trampoline in guest memory that
 *    records into a batch there; one exit drains a full batch
 *    (vmm/trace/trampolines.h). Sites the trampolines cannot reach keep
 *    an int3.
 * Handing over:
 *  - a guest linked with guestlib sends ET_HC_HANDOFF with its ring: the
 *    VMM restores every site, copies its events into the ring with their
 *    original timestamps and stops recording; the guest records from then
 *    on, and the VMM reads its ring at the end;
 *  - a stock Linux reaches its handoff symbol (ftrace_init): the VMM
 *    restores every site before ftrace looks at them, and stops.
 */
#ifndef VMM_TRACE_TRACER_H
#define VMM_TRACE_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/machine.h"
#include "vmm/sites/filter.h"
#include "vmm/sites/sites.h"
#include "vmm/trace/flight_recorder.h"
#include "vmm/trace/graph.h"
#include "vmm/trace/host_buffer.h"
#include "vmm/trace/site_patch.h"
#include "vmm/trace/trace_file.h"
#include "vmm/trace/trampolines.h"

enum trace_mode {
	TRACE_MODE_AUTO,       /* trampolines where possible, else breakpoints */
	TRACE_MODE_INT3,       /* breakpoints only */
	TRACE_MODE_TRAMPOLINE, /* trampolines; an error if the guest has no room */
};

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
	const char *expect;	   /* --expect FILE: check the trace (cmd_trace.c) */
};

int trace_mode_parse(const char *text, enum trace_mode *mode);

struct tracer {
	struct machine *m;
	const struct trace_options *o;
	struct site_table sites;
	struct site_filter filter;
	struct site_selection selection;
	struct site_patches patches;
	struct trampolines tramp;
	struct host_buffer buf;
	struct trace_writer *out;
	uint64_t tsc_khz;
	bool capturing;		/* the VMM records calls */
	bool handed_off;
	const char *handoff_how; /* "guest ring", "ftrace_init reached", ... */
	uint64_t until_addr;	/* vaddr, 0: none */
	uint64_t bp_events, tramp_events; /* recorded by each way */
	uint64_t tramp_unknown_ip;	  /* drained records naming no site */
	uint64_t tramp_corrupt;		  /* drains that found the batch overwritten */
	/* The guest ring after a guestlib handoff. */
	uint64_t ring_paddr, ring_bytes, ring_vmm_events;
	uint64_t guest_events, guest_lost;
	uint64_t hypercalls, bad_hypercalls;
	char hc_first_refusal[128];	  /* why the first refused hypercall was */
	uint64_t exit_events;	/* VM exits recorded (vmm/trace/exit_events.c) */
	struct flight_recorder fr; /* vmm/trace/flight_recorder.c */
	struct graph graph;	/* --graph: vmm/trace/graph.c */
};

/* Finds and selects sites, opens the trace file and patches the guest;
 * the machine must not have run yet. 0, or -1 with an error. */
int tracer_attach(struct tracer *t, struct machine *m, const struct trace_options *o);

/* After the run: collects what is left (flight-recorder buffer, the guest
 * ring), closes the trace file and prints a one-line summary. */
int tracer_finish(struct tracer *t);

void tracer_free(struct tracer *t);

/* For the tracer's own parts (handoff.c). */
uint64_t tracer_guest_tsc(struct vcpu *vcpu);
void tracer_record(struct tracer *t, const struct et_ring_record *ev);
void tracer_stop_capture(struct tracer *t, const char *how);

#endif /* VMM_TRACE_TRACER_H */
