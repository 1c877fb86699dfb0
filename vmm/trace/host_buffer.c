/* SPDX-License-Identifier: MIT */
#include "vmm/trace/host_buffer.h"

#include <stdlib.h>
#include <string.h>

#include "vmm/error.h"

int host_buffer_init(struct host_buffer *b, size_t capacity, enum overflow_policy policy)
{
	memset(b, 0, sizeof(*b));
	if (capacity == 0)
		return et_error("the event buffer must hold at least one event");
	b->events = calloc(capacity, sizeof(*b->events));
	if (!b->events)
		return et_error("cannot allocate an event buffer of %zu events", capacity);
	b->capacity = capacity;
	b->policy = policy;
	return 0;
}

void host_buffer_free(struct host_buffer *b)
{
	free(b->events);
	memset(b, 0, sizeof(*b));
}

bool host_buffer_add(struct host_buffer *b, const struct et_ring_record *ev)
{
	b->recorded++;
	if (b->count < b->capacity) {
		b->events[(b->start + b->count++) % b->capacity] = *ev;
		return true;
	}
	b->dropped++;
	if (b->policy == OVERFLOW_STOP)
		return false;
	b->events[b->start] = *ev;
	b->start = (b->start + 1) % b->capacity;
	return true;
}

const struct et_ring_record *host_buffer_at(const struct host_buffer *b, size_t i)
{
	return &b->events[(b->start + i) % b->capacity];
}

int overflow_policy_parse(const char *text, enum overflow_policy *policy)
{
	if (!strcmp(text, "stop"))
		*policy = OVERFLOW_STOP;
	else if (!strcmp(text, "overwrite"))
		*policy = OVERFLOW_OVERWRITE;
	else
		return et_error("unknown overflow policy '%s' (use stop or overwrite)", text);
	return 0;
}

const char *overflow_policy_name(enum overflow_policy policy)
{
	return policy == OVERFLOW_STOP ? "stop" : "overwrite";
}
