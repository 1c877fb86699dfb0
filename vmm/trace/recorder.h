/* SPDX-License-Identifier: MIT */
/*
 * The recorder: the one path every event the VMM records takes, whoever
 * saw it (a breakpoint, a trampoline batch, a VM exit, a return). It keeps
 * the event in the host buffer under its overflow policy, streams it to the
 * trace file, shows it to a tap (the flight recorder), counts drops, and
 * ends the run at --max-events. It also reads the guest clock every event
 * carries. The tracer's parts depend on this, not on each other.
 */
#ifndef VMM_TRACE_RECORDER_H
#define VMM_TRACE_RECORDER_H

#include <stdint.h>

#include "vmm/kvm/vcpu.h"
#include "vmm/trace/host_buffer.h"
#include "vmm/tracefile/trace_file.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sees every event offered, kept or dropped. */
typedef void (*recorder_tap_fn)(void *ctx, const struct et_ring_record *ev);

struct recorder {
	struct host_buffer buf;
	struct trace_writer *out;
	struct vcpu *vcpu;	/* the guest clock */
	uint64_t tsc_khz;	/* its frequency, 0 when unknown */
	uint64_t max_events;	/* end the run after this many; 0: no limit */
	recorder_tap_fn tap;
	void *tap_ctx;
	/* Events offered, by kind (dropped ones included, as buf.recorded). */
	uint64_t calls, returns, exits;
	uint64_t last_tsc; /* of the newest event recorded (the progress line) */
};

/* capacity events in the host buffer under policy. 0, or -1 with an error. */
int recorder_init(struct recorder *r, struct vcpu *vcpu, size_t capacity,
		  enum overflow_policy policy, uint64_t max_events);
/* Closes the trace file if it is still open (as "aborted"), frees. */
void recorder_free(struct recorder *r);

/* Records one event. */
void recorder_record(struct recorder *r, const struct et_ring_record *ev);

/* The guest's TSC now. */
uint64_t recorder_now(const struct recorder *r);

/* A marker in the trace file, at the guest clock's `tsc` or now. */
void recorder_mark(struct recorder *r, uint64_t tsc, const char *text);
void recorder_mark_now(struct recorder *r, const char *text);

/* How many more events --max-events lets through (UINT64_MAX: no limit). */
uint64_t recorder_room(const struct recorder *r);

/* At the end: a flight recorder's buffer (overwrite policy) goes to the
 * file, oldest first, and the exact drop count closes the log. */
void recorder_flush(struct recorder *r);

/* Why events were dropped, as the trace file says it. */
const char *recorder_drop_reason(const struct recorder *r);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_RECORDER_H */
