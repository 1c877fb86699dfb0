/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder: when a traced run ends badly it says what the
 * guest was doing. It keeps the newest events (whatever the host buffer's
 * overflow policy kept or dropped) and, per function, its newest call; on
 * a triple fault, a KVM internal error, a failed VM entry, a guest
 * panic() or a hang (--hang-timeout seconds in which no vCPU recorded a
 * new event, seen by the watchdog thread in hang_watchdog.c) it prints to
 * stderr the last --tail events, the registers and the instruction at
 * rip, and the call stack as the trace shows it:
 *  - with --graph, the frames whose returns the VMM redirected: exact;
 *  - otherwise from parent links: the function at rip, the newest call
 *    of it and that call's return address, the newest earlier call of the
 *    function holding that address, and so on. Calls of untraced
 *    functions end the chain, and a function that returned and was
 *    called again from elsewhere gives its newer caller: a heuristic.
 * The trace file is then finished with an END record naming the end.
 */
#ifndef VMM_TRACE_FLIGHT_RECORDER_H
#define VMM_TRACE_FLIGHT_RECORDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "earlytrace/abi.h"
#include "vmm/machine/machine.h"
#include "vmm/trace/graph.h"
#include "vmm/trace/hang_watch.h"

/* Per function, its newest call (for the parent-link stack). */
struct fr_last_call {
	uint64_t ip; /* 0: free slot */
	uint64_t parent_ip;
	uint64_t tsc; /* orders calls from both sources: one vCPU, one clock */
};

struct flight_recorder {
	struct et_ring_record *tail; /* newest VMM events, a ring of tail_cap */
	size_t tail_cap;
	_Atomic uint64_t seen;	     /* events ever added: the ring's head */
	struct et_ring_record *guest; /* newest guest-ring events (after a handoff) */
	size_t guest_cap;
	uint64_t guest_seen;
	struct fr_last_call *calls;
	size_t calls_cap, calls_nr;
	size_t print;		     /* --tail */

	/* The hang watchdog: a thread that ends the run when no vCPU moves
	 * (hang_watchdog.c; its decision: hang_watch.c). */
	double hang_timeout_s;
	pthread_t watchdog;
	bool watchdog_running;
	_Atomic bool watchdog_stop;
	_Atomic bool hung;
	unsigned nr_cpus;		/* the machine's vCPUs (at least 1) */
	_Atomic uint64_t *cpu_events;	/* per vCPU: events recorded from it */
	_Atomic uint64_t other_events;	/* events of no vCPU of this machine */
	/* Guest-memory counters that move when the guest records without an
	 * exit: each vCPU's trampoline batch cursor, the guest ring's head. */
	const volatile uint64_t *_Atomic *batches; /* nr_cpus of them */
	const volatile uint64_t *_Atomic guest_ring;
	struct hang_watch hang;		/* the watchdog thread's, then finish's */
	double hang_at;			/* when the watchdog saw the hang */

	char end[512]; /* what ended the run, for END (a panic's message too);
			* "" until the run has ended or a panic was reported */

	struct machine *m;	   /* symbols, the vCPU, the stop state */
	const struct graph *graph; /* --graph's return frames: the exact stack */
	uint64_t tsc_khz;	   /* to say "12.3 us before the end"; 0: cycles */
};

/* tail: events to print (--tail). 0, or -1 with an error. */
int flight_recorder_init(struct flight_recorder *fr, size_t tail, struct machine *m,
			 const struct graph *graph, uint64_t tsc_khz);
void flight_recorder_free(struct flight_recorder *fr);

/* Every event the VMM records, kept or dropped (a recorder tap: ctx is
 * the flight recorder). */
void flight_recorder_add(void *fr, const struct et_ring_record *ev);
/* An event read from the guest's ring at the end of the run. */
void flight_recorder_add_guest(struct flight_recorder *fr, const struct et_ring_record *ev);

/* The hang watchdog (hang_watchdog.c). Watch a guest-memory counter for
 * progress: vCPU cpu's trampoline batch cursor, or the guest ring's head
 * (no vCPU of its own); NULL stops watching it. */
void flight_recorder_watch_batch(struct flight_recorder *fr, unsigned cpu,
				 const volatile uint64_t *cursor);
void flight_recorder_watch_ring(struct flight_recorder *fr, const volatile uint64_t *head);

/* --hang-timeout: starts the watchdog. 0, or -1 with an error. */
int flight_recorder_start(struct flight_recorder *fr, double hang_timeout_s);
/* Stops and joins the watchdog (idempotent). */
void flight_recorder_stop(struct flight_recorder *fr);

/* The guest entered panic(): report now (the guest goes on), and say in
 * text what happened, for the trace's marker. */
void flight_recorder_on_panic(struct flight_recorder *fr, struct vcpu *vcpu, char *text,
			      size_t len);

/* After the run, once every event is in: reports a crash or a hang and
 * sets fr->end. Nothing for runs that ended well. */
void flight_recorder_finish(struct flight_recorder *fr);

/* The report itself: why, optionally the registers, the last events and
 * the call stack. */
void flight_recorder_report(struct flight_recorder *fr, const char *why, bool registers,
			    FILE *out);

#endif /* VMM_TRACE_FLIGHT_RECORDER_H */
