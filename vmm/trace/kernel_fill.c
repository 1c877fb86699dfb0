/* SPDX-License-Identifier: MIT */
/*
 * `trace --follow`'s fill (kernel_ring.h): at the takeover, earlytrace's
 * early calls go into the stock kernel's own ftrace ring, so the kernel's
 * readers (tracefs, trace-cmd in the guest, ftrace_dump_on_oops) begin at
 * the first instruction too. The events as the kernel's tracer would have
 * recorded them: the function tracer's ip (the fentry site, which is what
 * earlytrace records) and parent ip; with --graph, function_graph's
 * entries and returns with their depth among the traced calls. Then one
 * read of the ring takes them back, silently, and checks them: the trace
 * file has them already, and later reads start after them.
 */
#include "vmm/trace/kernel_ring.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/ftrace/ring_fill.h"
#include "vmm/util/error.h"

/* One event with its place in the host buffer, for a stable sort. */
struct keyed {
	struct et_ring_record rec;
	size_t seq;
};

static int by_time(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->rec.tsc != y->rec.tsc)
		return x->rec.tsc < y->rec.tsc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The calls (and returns) a vCPU recorded, in time order: trampoline
 * batches reach the host buffer after breakpoint events that came later. */
static struct keyed *keyed_events(const struct host_buffer *early, uint32_t cpu, bool graph,
				  size_t *n)
{
	struct keyed *k = malloc((early->count ? early->count : 1) * sizeof(*k));

	*n = 0;
	if (!k)
		return NULL;
	for (size_t i = 0; i < early->count; i++) {
		const struct et_ring_record *ev = host_buffer_at(early, i);
		unsigned kind = et_rec_kind(ev);

		if (et_rec_cpu(ev) != cpu || (kind != ET_REC_CALL && !(graph && kind == ET_REC_RET)))
			continue;
		k[(*n)++] = (struct keyed){ *ev, i };
	}
	qsort(k, *n, sizeof(*k), by_time);
	return k;
}

/* The kernel's events for them. function_graph's depth counts the traced
 * calls open on the CPU; a return takes its call's time as calltime; a
 * frame abandoned (unwound) is closed without an event, as the kernel
 * never sees its return either. */
static size_t convert(const struct keyed *k, size_t n, bool graph, struct ftrace_fill_event *out)
{
	struct frame {
		uint64_t func, ts;
	} *stack = graph ? malloc((n ? n : 1) * sizeof(*stack)) : NULL;
	size_t depth = 0, m = 0;

	if (graph && !stack)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct et_ring_record *r = &k[i].rec;
		struct ftrace_fill_event *e = &out[m];

		memset(e, 0, sizeof(*e));
		e->ts = r->tsc;
		e->ip = r->ip;
		if (!graph) {
			e->kind = FTRACE_FILL_FUNCTION;
			e->parent_ip = r->parent_ip;
			m++;
			continue;
		}
		if (et_rec_kind(r) == ET_REC_CALL) {
			e->kind = FTRACE_FILL_GRAPH_ENTRY;
			e->depth = (int32_t)depth;
			if (r->flags & ET_REC_F_RET_TRACED)
				stack[depth++] = (struct frame){ r->ip, r->tsc };
			m++;
			continue;
		}
		/* A return: its frame, the innermost open one of its function. */
		size_t at = depth;
		while (at > 0 && stack[at - 1].func != r->ip)
			at--;
		if (at == 0) {
			/* No call seen (it began before capture): as at depth 0. */
			if (r->flags & ET_REC_F_UNWOUND)
				continue;
			e->kind = FTRACE_FILL_GRAPH_RETURN;
			e->calltime = r->tsc;
			m++;
			continue;
		}
		depth = at - 1;
		if (r->flags & ET_REC_F_UNWOUND)
			continue;
		e->kind = FTRACE_FILL_GRAPH_RETURN;
		e->depth = (int32_t)depth;
		e->calltime = stack[depth].ts;
		m++;
	}
	free(stack);
	return m;
}

ssize_t kernel_fill_events(const struct host_buffer *early, uint32_t cpu, bool graph,
			   struct ftrace_fill_event **out)
{
	size_t n;
	struct keyed *k = keyed_events(early, cpu, graph, &n);
	struct ftrace_fill_event *ev = k ? malloc((n ? n : 1) * sizeof(*ev)) : NULL;

	*out = NULL;
	if (!ev) {
		free(k);
		return et_error("out of memory");
	}
	n = convert(k, n, graph, ev);
	free(k);
	*out = ev;
	return (ssize_t)n;
}

/* What was written, per CPU, for the read back. */
struct written {
	struct ftrace_fill_event *ev; /* the events kept: the newest of those given */
	size_t n, next;
};

struct readback {
	struct kernel_ring *kr;
	struct written *cpus;
	uint32_t nr_cpus;
	uint64_t taken, overwritten;
};

static bool same_event(const struct ftrace_fill_event *w, const struct ftrace_event *ev)
{
	switch (w->kind) {
	case FTRACE_FILL_FUNCTION:
		return ev->kind == FTRACE_EVENT_FUNCTION && ev->ip == w->ip &&
		       ev->parent_ip == w->parent_ip;
	case FTRACE_FILL_GRAPH_ENTRY:
		return ev->kind == FTRACE_EVENT_GRAPH_ENTRY && ev->func == w->ip;
	case FTRACE_FILL_GRAPH_RETURN:
		return ev->kind == FTRACE_EVENT_GRAPH_RETURN && ev->func == w->ip;
	}
	return false;
}

static int readback_event(void *ctx, const struct ftrace_event *ev)
{
	struct readback *rb = ctx;
	struct written *w = ev->cpu < rb->nr_cpus ? &rb->cpus[ev->cpu] : NULL;

	rb->taken++;
	if (!w || w->next >= w->n || w->ev[w->next].ts != ev->ts ||
	    !same_event(&w->ev[w->next], ev))
		rb->kr->fill_readback_mismatches++;
	if (w && w->next < w->n)
		w->next++;
	return 0;
}

static void readback_drops(void *ctx, const struct ftrace_drops *d)
{
	struct readback *rb = ctx;

	rb->overwritten += d->overwritten + d->not_written;
}

static void readback_warning(void *ctx, int cpu, const char *msg)
{
	struct readback *rb = ctx;

	(void)cpu;
	rb->kr->fill_readback_mismatches++;
	et_warn("--follow: reading back the early calls written into the kernel's ring: %s", msg);
}

/* The one read that takes the filled events back out of the reader's way. */
static void read_back(struct kernel_ring *kr, struct written *cpus, uint32_t nr_cpus)
{
	struct readback rb = { .kr = kr, .cpus = cpus, .nr_cpus = nr_cpus };
	const struct ftrace_sink sink = {
		.ctx = &rb,
		.event = readback_event,
		.drops = readback_drops,
		.warning = readback_warning,
	};

	if (ftrace_reader_read(kr->reader, &sink, false))
		readback_warning(&rb, -1, et_last_error());
	if (rb.taken != kr->filled || rb.overwritten != kr->fill_overrun)
		kr->fill_readback_mismatches++;
	if (kr->fill_readback_mismatches)
		et_warn("--follow: the kernel's ring gave back %" PRIu64 " of the %" PRIu64
			" early calls written, %" PRIu64 " of them not as written",
			rb.taken, kr->filled, kr->fill_readback_mismatches);
}

static void skipped(struct kernel_ring *kr, const char *why)
{
	char text[300];

	snprintf(kr->fill_skipped, sizeof(kr->fill_skipped), "%s", why);
	snprintf(text, sizeof(text),
		 "follow: the early calls were not written into the kernel's ftrace ring: %s", why);
	recorder_mark_now(kr->rec, text);
	et_note("%s", text);
}

void kernel_ring_fill(struct kernel_ring *kr, const struct host_buffer *early, bool graph)
{
	uint32_t nr_cpus = 0;
	struct written *cpus;
	const struct ftrace_fill_config cfg = {
		.layout = &kr->layout,
		.global_trace = kr->global_trace,
		.read = kr->read,
		.write = kr->write,
		.ctx = kr->mem_ctx,
	};
	uint64_t pages = 0, nr_pages = 0, first_ts = UINT64_MAX;
	char text[320];

	if (!kr->reader || kr->fill_tried)
		return;
	kr->fill_tried = true;
	for (size_t i = 0; i < early->count; i++)
		if (et_rec_cpu(host_buffer_at(early, i)) + 1 > nr_cpus)
			nr_cpus = et_rec_cpu(host_buffer_at(early, i)) + 1;
	cpus = calloc(nr_cpus ? nr_cpus : 1, sizeof(*cpus));
	if (!cpus) {
		skipped(kr, "out of memory");
		return;
	}
	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++) {
		struct ftrace_fill_result res;
		struct ftrace_fill_event *ev;
		ssize_t got = kernel_fill_events(early, cpu, graph, &ev);
		size_t n = got > 0 ? (size_t)got : 0;
		int ret;

		if (got < 0) {
			skipped(kr, et_last_error());
			break;
		}
		if (!n) {
			free(ev);
			continue;
		}
		ret = ftrace_ring_fill(&cfg, cpu, ev, n, &res);
		if (ret == 1) {
			/* A vCPU the kernel has no ring for yet (not up when the
			 * ring was allocated): counted. */
			kr->fill_no_ring += n;
			free(ev);
			continue;
		}
		if (ret) {
			free(ev);
			skipped(kr, et_last_error());
			break;
		}
		kr->filled += res.written;
		kr->fill_overrun += res.overrun;
		if (res.written && res.first_ts < first_ts)
			first_ts = res.first_ts;
		pages += res.pages;
		nr_pages += res.nr_pages;
		memmove(ev, ev + res.overrun, (size_t)res.written * sizeof(*ev));
		cpus[cpu] = (struct written){ ev, (size_t)res.written, 0 };
	}
	/* tracefs's trace file skips what is older than the buffer's start. */
	if (kr->filled && ftrace_fill_time_start(&cfg, first_ts))
		et_warn("--follow: the kernel's trace file will not show the early calls: %s",
			et_last_error());
	if (kr->filled || kr->fill_overrun)
		read_back(kr, cpus, nr_cpus);
	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++)
		free(cpus[cpu].ev);
	free(cpus);
	if (kr->fill_skipped[0] && !kr->filled)
		return;
	snprintf(text, sizeof(text),
		 "follow: %" PRIu64 " early %s written into the kernel's ftrace ring (%" PRIu64
		 " of its %" PRIu64 " pages)%s",
		 kr->filled, graph ? "calls and returns" : "calls", pages, nr_pages,
		 graph ? " as function_graph entries and exits" : "");
	if (kr->fill_overrun)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "; the oldest %" PRIu64 " did not fit (the kernel's overrun counts them; "
			 "a larger --kernel-buf-size keeps them)",
			 kr->fill_overrun);
	if (kr->fill_no_ring)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "; %" PRIu64 " of vCPUs the kernel had no ring for yet", kr->fill_no_ring);
	recorder_mark_now(kr->rec, text);
	if (kr->fill_overrun || kr->fill_no_ring)
		et_note("%s", text);
}
