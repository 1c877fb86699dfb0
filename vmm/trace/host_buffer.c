/* SPDX-License-Identifier: MIT */
#include "vmm/trace/host_buffer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/util/error.h"

/*
 * The events get a mapping of their own between two inaccessible pages:
 * an overrun faults instead of corrupting the heap, and the buffer is one
 * mapping of exactly its size, which the kernel never merges with a
 * neighbour (tools reading /proc/PID/smaps, bench/performance.py among
 * them, can tell the trace buffer from the VMM's own memory). Pages cost
 * memory only once an event lands on them.
 */
static size_t mapping_bytes(size_t capacity)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (capacity * sizeof(struct et_ring_record) + page - 1) / page * page;
}

int host_buffer_init(struct host_buffer *b, size_t capacity, enum overflow_policy policy)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes;
	uint8_t *map;

	memset(b, 0, sizeof(*b));
	if (capacity == 0)
		return et_error("the event buffer must hold at least one event");
	if (capacity > (SIZE_MAX - 2 * page) / sizeof(struct et_ring_record))
		return et_error("an event buffer of %zu events is too large", capacity);
	bytes = mapping_bytes(capacity);
	map = mmap(NULL, bytes + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (map == MAP_FAILED)
		return et_error("cannot allocate an event buffer of %zu events", capacity);
	if (mprotect(map + page, bytes, PROT_READ | PROT_WRITE)) {
		munmap(map, bytes + 2 * page);
		return et_error("cannot allocate an event buffer of %zu events", capacity);
	}
	b->events = (struct et_ring_record *)(void *)(map + page);
	b->capacity = capacity;
	b->policy = policy;
	return 0;
}

void host_buffer_free(struct host_buffer *b)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (b->events)
		munmap((uint8_t *)b->events - page, mapping_bytes(b->capacity) + 2 * page);
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
