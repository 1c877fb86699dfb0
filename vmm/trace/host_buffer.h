/* SPDX-License-Identifier: MIT */
/*
 * The host-side event buffer for the early phase: a fixed number of
 * events, with a stated overflow policy, and an exact count of every
 * event that did not fit (never lost silently).
 *   stop:      when full, new events are dropped (and counted), as ftrace
 *              does when its buffer fills without overwrite;
 *   overwrite: when full, the oldest event is overwritten (and counted):
 *              a flight recorder that always holds the latest events.
 */
#ifndef VMM_TRACE_HOST_BUFFER_H
#define VMM_TRACE_HOST_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/trace/event.h"

#ifdef __cplusplus
extern "C" {
#endif

enum overflow_policy { OVERFLOW_STOP, OVERFLOW_OVERWRITE };

struct host_buffer {
	struct et_ring_record *events;
	size_t capacity;
	size_t start; /* oldest event */
	size_t count;
	enum overflow_policy policy;
	uint64_t recorded; /* events offered, ever */
	uint64_t dropped;  /* events not kept (stop) or overwritten (overwrite) */
};

/* 0, or -1 with an error (capacity 0, or no memory). */
int host_buffer_init(struct host_buffer *b, size_t capacity, enum overflow_policy policy);
void host_buffer_free(struct host_buffer *b);

/* Returns true if the event was kept. */
bool host_buffer_add(struct host_buffer *b, const struct et_ring_record *ev);

/* The i-th oldest kept event, i < count. */
const struct et_ring_record *host_buffer_at(const struct host_buffer *b, size_t i);

int overflow_policy_parse(const char *text, enum overflow_policy *policy);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_HOST_BUFFER_H */
