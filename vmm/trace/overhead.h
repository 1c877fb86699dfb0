/* SPDX-License-Identifier: MIT */
/*
 * Durations without the tracer's own cost. While the guest stands still
 * for a breakpoint exit or a trampoline drain, its TSC runs on, so every
 * duration that spans one is longer by it. The trace file's OVERHEAD
 * record says what those stops cost (measured in the VMM at each exit,
 * plus the round trip into the guest timed at the start); this clock
 * takes them out again, event by event in time order:
 *
 *   time(e) = max(time(previous event), tsc(e) - taken)
 *
 * where taken is what the stops before e cost: each earlier call or
 * return a breakpoint exit recorded counts the mean cost of a breakpoint
 * exit (exit_ticks + exits * rest_ticks) / exits; the drains' cost
 * (drain_ticks + drains * rest_ticks) comes out of the gaps the drains
 * made. A drain stops its vCPU between two of the trampolines' calls, so
 * its cost is a gap in that CPU's calls at least as wide: each of the
 * trampolines' calls that follows a gap of half a drain's mean cost or
 * more (after the host's waits in it, below) takes out of it what the
 * drains have cost so far, in proportion to the calls seen, less what
 * earlier gaps took, and never more than the gap. Spread evenly over
 * the calls instead, a drain that costs more than the calls of its batch
 * take to run (always under emulation, often on real hardware) put them
 * all at one time. An event's own exit counts after it: the part of
 * a call's exit after its TSC was read and the part of its return's exit
 * before add up to one exit, so a function's duration loses one exit for
 * itself and one for every event inside it. Means, not each exit's own
 * cost: a single short duration can come out a little long or short, and
 * never below its predecessor's time (time does not run backwards: such
 * an event is placed at its predecessor's time and counted in `clamped`,
 * so no duration is negative). The raw TSC stays in the file; reports
 * show it with --raw-durations.
 *
 * The guest's TSC also runs on while a vCPU's host thread waits for a
 * host CPU (other host tasks run): host load, not the guest's work. The
 * VMM learns each wait from KVM's steal-time area at the first exit after
 * it (vmm/kvm/host_wait.h) and writes a WAIT record; the clock takes each
 * out of its CPU's times from that exit on, on top of taken:
 *
 *   time(e) = max(time(previous event on e's CPU), tsc(e) - taken - waited(e's CPU))
 *
 * A breakpoint event is recorded at that exit, so its durations lose
 * exactly the waits inside them; events a trampoline recorded between
 * two exits keep a wait that fell among them until the exit that drained
 * them. Without WAIT records (an older file, a host without steal time)
 * waits stay in and the OVERHEAD record's waited_ticks says how much
 * there was.
 */
#ifndef VMM_TRACE_OVERHEAD_H
#define VMM_TRACE_OVERHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/tracefile/trace_file.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Waits and clamping are kept per CPU up to here; higher CPUs share the
 * last slot. */
#define OVERHEAD_CPUS 256

struct overhead_clock {
	bool on;		/* an OVERHEAD record or WAIT records, and not raw */
	uint64_t exit_total;	/* ticks over all breakpoint exits */
	uint64_t exits;
	uint64_t drain_total;	/* ticks over all drains */
	uint64_t tramp_events;	/* the trampolines' calls in the file */
	uint64_t exit_events, tramp_seen; /* counted so far */
	uint64_t drain_gap;	/* a gap this wide can hold a drain */
	uint64_t drain_taken;	/* the drains' ticks taken out so far */
	uint64_t taken;		/* ticks taken out so far */
	uint64_t clamped;	/* events placed at their predecessor's time */
	const struct trace_wait *waits; /* in TSC order */
	size_t nr_waits, next_wait;
	uint64_t waited[OVERHEAD_CPUS]; /* each CPU's waits taken out so far */
	uint64_t last[OVERHEAD_CPUS];	/* each CPU's previous event time */
	/* Each CPU's previous event as recorded, and its waits then: where
	 * a gap begins, and how much of it the host's waits took. */
	uint64_t prev_tsc[OVERHEAD_CPUS], prev_waited[OVERHEAD_CPUS];
	bool seen[OVERHEAD_CPUS];
};

/* raw: show the TSC as recorded (the clock then changes nothing). */
void overhead_clock_init(struct overhead_clock *c, const struct trace_info *in, bool raw);

/* Whether e was recorded by a breakpoint exit of the tracer's (a call or
 * a return; not a VM exit event, an unwound return or the kernel ring's). */
bool overhead_event_had_exit(const struct et_ring_record *e);

/* e's time without the tracer's cost before it; call once per event, in
 * the merge's (time) order. */
uint64_t overhead_clock_event(struct overhead_clock *c, const struct et_ring_record *e);

/* A note's (mark's, drop's) time on the same clock, given where the
 * events have got to (a note has no CPU: the boot CPU's waits). */
uint64_t overhead_clock_note(const struct overhead_clock *c, uint64_t tsc);

/* For the report's closing note: how many events the clock clamped, ""
 * when none. */
const char *overhead_clamped_text(const struct overhead_clock *c, char *buf, size_t len);

/* Ticks per breakpoint exit and per drain taken out (0 when none). */
uint64_t overhead_per_exit(const struct trace_overhead *o);
uint64_t overhead_per_drain(const struct trace_overhead *o);

/* One line for report headers: what is taken out, or that durations are
 * raw and why. */
const char *overhead_describe(const struct trace_info *in, bool raw, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_OVERHEAD_H */
