/* SPDX-License-Identifier: MIT */
#include "vmm/trace/overhead.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "earlytrace/abi.h"

/* a * k / n without overflow (k <= n in practice, but not trusted). */
static uint64_t share(uint64_t a, uint64_t k, uint64_t n)
{
	unsigned __int128 v = (unsigned __int128)a * k / n;

	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static uint64_t total(uint64_t ticks, uint64_t count, uint64_t rest)
{
	unsigned __int128 v = (unsigned __int128)count * rest + ticks;

	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

uint64_t overhead_per_exit(const struct trace_overhead *o)
{
	return o->exits ? total(o->exit_ticks, o->exits, o->rest_ticks) / o->exits : 0;
}

uint64_t overhead_per_drain(const struct trace_overhead *o)
{
	return o->drains ? total(o->drain_ticks, o->drains, o->rest_ticks) / o->drains : 0;
}

void overhead_clock_init(struct overhead_clock *c, const struct trace_info *in, bool raw)
{
	const struct trace_overhead *o = &in->overhead;

	memset(c, 0, sizeof(*c));
	c->on = !raw && ((in->has_overhead && (o->exits || o->drains)) || in->nr_waits);
	c->waits = in->waits;
	c->nr_waits = in->nr_waits;
	c->exits = o->exits;
	c->exit_total = total(o->exit_ticks, o->exits, o->rest_ticks);
	c->drain_total = total(o->drain_ticks, o->drains, o->rest_ticks);
	c->drain_gap = overhead_per_drain(o) / 2 ? overhead_per_drain(o) / 2 : 1;
	c->tramp_events = in->events_by_source[ET_REC_SRC_TRAMPOLINE];
}

bool overhead_event_had_exit(const struct et_ring_record *e)
{
	unsigned kind = et_rec_kind(e);

	return (kind == ET_REC_CALL || kind == ET_REC_RET) &&
	       (e->flags & ET_REC_SRC_MASK) == ET_REC_SRC_BREAKPOINT &&
	       !(e->flags & (ET_REC_F_UNWOUND | ET_REC_F_FTRACE));
}

static unsigned cpu_slot(uint32_t cpu)
{
	return cpu < OVERHEAD_CPUS ? cpu : OVERHEAD_CPUS - 1;
}

static uint64_t sum(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* A trampoline call on cpu at tsc, the tramp_seen-th: the drains' cost so
 * far comes out of the gap before it, if one can hold a drain. */
static void take_drains_at_gap(struct overhead_clock *c, unsigned cpu, uint64_t tsc)
{
	uint64_t due = share(c->drain_total, c->tramp_seen, c->tramp_events);
	uint64_t pending = due > c->drain_taken ? due - c->drain_taken : 0;
	uint64_t gap, waits, room;

	if (!pending || !c->seen[cpu] || tsc <= c->prev_tsc[cpu])
		return;
	gap = tsc - c->prev_tsc[cpu];
	waits = c->waited[cpu] - c->prev_waited[cpu];
	room = gap > waits ? gap - waits : 0;
	if (room >= c->drain_gap)
		c->drain_taken += pending < room ? pending : room;
}

uint64_t overhead_clock_event(struct overhead_clock *c, const struct et_ring_record *e)
{
	unsigned cpu = cpu_slot(e->cpu);
	bool tramp_call = (e->flags & ET_REC_SRC_MASK) == ET_REC_SRC_TRAMPOLINE &&
			  et_rec_kind(e) == ET_REC_CALL && c->tramp_events;
	uint64_t t, out;

	if (!c->on)
		return e->tsc;
	/* The waits learnt at exits up to this event. */
	for (; c->next_wait < c->nr_waits && c->waits[c->next_wait].tsc <= e->tsc; c->next_wait++) {
		const struct trace_wait *w = &c->waits[c->next_wait];

		c->waited[cpu_slot(w->cpu)] = sum(c->waited[cpu_slot(w->cpu)], w->ticks);
	}
	/* A drain before this call stopped the guest in the gap before it. */
	if (tramp_call) {
		c->tramp_seen++;
		take_drains_at_gap(c, cpu, e->tsc);
		c->taken = sum(c->exits ? share(c->exit_total, c->exit_events, c->exits) : 0,
			       c->drain_taken);
	}
	out = sum(c->taken, c->waited[cpu]);
	t = e->tsc > out ? e->tsc - out : 0;
	if (t < c->last[cpu]) {
		t = c->last[cpu];
		c->clamped++;
	}
	c->last[cpu] = t;
	c->prev_tsc[cpu] = e->tsc;
	c->prev_waited[cpu] = c->waited[cpu];
	c->seen[cpu] = true;
	/* Its own exit counts from here on. */
	if (overhead_event_had_exit(e) && c->exits) {
		c->exit_events++;
		c->taken = sum(share(c->exit_total, c->exit_events, c->exits), c->drain_taken);
	}
	return t;
}

uint64_t overhead_clock_note(const struct overhead_clock *c, uint64_t tsc)
{
	uint64_t out = sum(c->taken, c->waited[0]);

	if (!c->on)
		return tsc;
	return tsc > out ? tsc - out : 0;
}

const char *overhead_clamped_text(const struct overhead_clock *c, char *buf, size_t len)
{
	if (!c->on || !c->clamped)
		return "";
	snprintf(buf, len, "%" PRIu64 " events would have come before the event before them with "
			   "the mean exit cost taken out: each was placed at that event's time (no "
			   "duration below zero; --raw-durations: as recorded)",
		 c->clamped);
	return buf;
}

/* "; the vCPU thread waited N ms for a host CPU (...)": taken out where
 * WAIT records say when, else left in; "" when nothing says. */
static const char *waited_text(const struct trace_info *in, bool raw, char *buf, size_t len)
{
	const struct trace_overhead *o = &in->overhead;

	buf[0] = '\0';
	if (in->nr_waits) {
		if (in->tsc_khz)
			snprintf(buf, len, "; %zu waits of the vCPU threads for a host CPU, %.1f ms, "
					   "%s",
				 in->nr_waits, (double)in->waits_ticks / (double)in->tsc_khz,
				 raw ? "included" : "taken out");
		else
			snprintf(buf, len, "; %zu waits of the vCPU threads for a host CPU, %" PRIu64
					   " TSC ticks, %s",
				 in->nr_waits, in->waits_ticks, raw ? "included" : "taken out");
		return buf;
	}
	if (!(o->flags & TRACE_OVERHEAD_WAITED_KNOWN))
		return buf;
	if (in->tsc_khz)
		snprintf(buf, len, "; the vCPU thread waited %.1f ms for a host CPU during the run "
				   "(host load, left in)",
			 (double)o->waited_ticks / (double)in->tsc_khz);
	else
		snprintf(buf, len, "; the vCPU thread waited %" PRIu64 " TSC ticks for a host CPU "
				   "during the run (host load, left in)",
			 o->waited_ticks);
	return buf;
}

const char *overhead_describe(const struct trace_info *in, bool raw, char *buf, size_t len)
{
	const struct trace_overhead *o = &in->overhead;
	char waited[160];

	waited_text(in, raw, waited, sizeof(waited));
	if (!in->has_overhead)
		snprintf(buf, len, "durations %s (no OVERHEAD record: the run did not finish, or "
				   "the VMM could not measure its exits)%s",
			 in->nr_waits && !raw ? "with the tracer's exits in" : "as recorded", waited);
	else if (raw)
		snprintf(buf, len, "durations as recorded (--raw-durations): the tracer's %" PRIu64
				   " exits and %" PRIu64 " drains included%s",
			 o->exits, o->drains, waited);
	else
		snprintf(buf, len, "durations without the tracer's own cost: %" PRIu64
				   " breakpoint exits at %" PRIu64 " TSC ticks each and %" PRIu64
				   " drains at %" PRIu64 " taken out (--raw-durations: as recorded)%s",
			 o->exits, overhead_per_exit(o), o->drains, overhead_per_drain(o), waited);
	return buf;
}
