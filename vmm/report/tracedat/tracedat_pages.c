/* SPDX-License-Identifier: MIT */
/* Ring-buffer pages, one stream per CPU (tracedat_pages.h). */
#include "vmm/report/tracedat/tracedat_pages.h"

#include <stdlib.h>
#include <string.h>

#include "vmm/report/tracedat/tracedat_formats.h"
#include "vmm/report/tracedat/tracedat_out.h"
#include "vmm/util/error.h"

/* The kernel's ring_buffer_event encoding. */
#define TYPE_TIME_EXTEND 30
#define TYPE_DATA_MAX 28      /* RINGBUF_TYPE_DATA_TYPE_LEN_MAX */
#define SMALL_DATA_MAX (TYPE_DATA_MAX * 4) /* RB_MAX_SMALL_DATA */
#define DELTA_BITS 27
#define EXTEND_MAX_BITS 59    /* 32 bits of array[0] above the 27 */
#define EXTEND_SIZE 8

/* Pages a CPU buffers before flushing them together. */
#define BUF_PAGES 16

struct tracedat_cpu {
	uint64_t done_pages;	/* pages closed */
	uint64_t written_pages; /* of those, flushed */
	uint64_t events;
	uint64_t last_ts;	/* of the previous event on this CPU */
	uint32_t used;		/* bytes of events in the open page */
	bool open;
	uint8_t *buf;		/* BUF_PAGES pages, the open one last */
};

int tracedat_pages_init(struct tracedat_pages *p, uint32_t nr_cpus, tracedat_flush_fn flush,
			void *flush_ctx)
{
	memset(p, 0, sizeof(*p));
	if (!nr_cpus || nr_cpus > TRACEDAT_MAX_CPUS)
		return et_error("trace-dat: %u CPUs (1 to %u can be written)", nr_cpus,
				TRACEDAT_MAX_CPUS);
	p->cpus = calloc(nr_cpus, sizeof(*p->cpus));
	if (!p->cpus)
		return et_error("out of memory");
	p->nr_cpus = nr_cpus;
	p->flush = flush;
	p->flush_ctx = flush_ctx;
	return 0;
}

void tracedat_pages_free(struct tracedat_pages *p)
{
	if (p->cpus)
		for (uint32_t i = 0; i < p->nr_cpus; i++)
			free(p->cpus[i].buf);
	free(p->cpus);
	p->cpus = NULL;
}

/* The open page of a CPU. */
static uint8_t *open_page(struct tracedat_cpu *c)
{
	return c->buf + (c->done_pages - c->written_pages) * TRACEDAT_PAGE_SIZE;
}

static int flush(struct tracedat_pages *p, uint32_t cpu)
{
	struct tracedat_cpu *c = &p->cpus[cpu];
	uint64_t n = c->done_pages - c->written_pages;

	if (!n)
		return 0;
	if (p->flush(p->flush_ctx, cpu, c->written_pages, c->buf, (uint32_t)n))
		return -1;
	c->written_pages = c->done_pages;
	return 0;
}

/* The page gets its commit (its time_stamp was set when it opened). */
static int close_page(struct tracedat_pages *p, uint32_t cpu)
{
	struct tracedat_cpu *c = &p->cpus[cpu];

	if (!c->open)
		return 0;
	tracedat_put_u64(open_page(c) + 8, c->used);
	c->open = false;
	c->done_pages++;
	if (c->done_pages - c->written_pages == BUF_PAGES)
		return flush(p, cpu);
	return 0;
}

static int start_page(struct tracedat_pages *p, uint32_t cpu, uint64_t ts)
{
	struct tracedat_cpu *c = &p->cpus[cpu];

	if (!c->buf && !(c->buf = malloc(BUF_PAGES * TRACEDAT_PAGE_SIZE)))
		return et_error("out of memory");
	memset(open_page(c), 0, TRACEDAT_PAGE_SIZE);
	tracedat_put_u64(open_page(c), ts);
	c->open = true;
	c->used = 0;
	c->last_ts = ts;
	return 0;
}

/* Bytes an event of len payload bytes takes, header included. */
static uint32_t event_size(uint32_t len)
{
	uint32_t padded = (len + 3) & ~3u;

	return 4 + (padded > SMALL_DATA_MAX ? 4 : 0) + padded;
}

int tracedat_pages_add(struct tracedat_pages *p, uint32_t cpu, uint64_t ts, const void *payload,
		       uint32_t len)
{
	struct tracedat_cpu *c;
	uint32_t need = event_size(len), padded = (len + 3) & ~3u;
	uint64_t delta;
	uint8_t *at;

	if (cpu >= p->nr_cpus)
		return et_error("trace-dat: event on CPU %u of %u", cpu, p->nr_cpus);
	if (len < TRACEDAT_COMMON_SIZE || len > TRACEDAT_MAX_PAYLOAD)
		return et_error("trace-dat: an event of %u bytes (8 to %u fit a page)", len,
				TRACEDAT_MAX_PAYLOAD);
	c = &p->cpus[cpu];
	if (c->events && ts < c->last_ts) {
		p->backwards++;
		ts = c->last_ts;
	}
	if (c->open) {
		delta = ts - c->last_ts;
		/* A delta beyond what a time extend holds, or no room: the
		 * next page starts with the event's own time. */
		if (delta >> EXTEND_MAX_BITS ||
		    c->used + (delta >> DELTA_BITS ? EXTEND_SIZE : 0) + need > TRACEDAT_PAGE_DATA) {
			if (close_page(p, cpu))
				return -1;
		}
	}
	if (!c->open && start_page(p, cpu, ts))
		return -1;
	delta = ts - c->last_ts;
	at = open_page(c) + TRACEDAT_PAGE_HEADER + c->used;
	if (delta >> DELTA_BITS) {
		tracedat_put_u32(at, TYPE_TIME_EXTEND | (uint32_t)(delta & ((1u << DELTA_BITS) - 1)) << 5);
		tracedat_put_u32(at + 4, (uint32_t)(delta >> DELTA_BITS));
		at += EXTEND_SIZE;
		c->used += EXTEND_SIZE;
		delta = 0;
	}
	if (padded > SMALL_DATA_MAX) {
		tracedat_put_u32(at, (uint32_t)delta << 5);
		tracedat_put_u32(at + 4, padded + 4);
		at += 8;
	} else {
		tracedat_put_u32(at, (uint32_t)delta << 5 | padded / 4);
		at += 4;
	}
	memcpy(at, payload, len); /* the padding is the page's zeros */
	c->used += need;
	c->last_ts = ts;
	c->events++;
	return 0;
}

int tracedat_pages_finish(struct tracedat_pages *p)
{
	for (uint32_t cpu = 0; cpu < p->nr_cpus; cpu++)
		if (close_page(p, cpu) || flush(p, cpu))
			return -1;
	return 0;
}

uint64_t tracedat_pages_bytes(const struct tracedat_pages *p, uint32_t cpu)
{
	const struct tracedat_cpu *c = &p->cpus[cpu];

	return (c->done_pages + (c->open ? 1 : 0)) * TRACEDAT_PAGE_SIZE;
}

uint64_t tracedat_pages_events(const struct tracedat_pages *p, uint32_t cpu)
{
	return p->cpus[cpu].events;
}
