/* SPDX-License-Identifier: MIT */
/*
 * `report --format trace-dat`: an earlytrace trace file as trace-cmd's
 * trace.dat (docs/trace-format.md has the mapping). Events go in TSC order
 * (trace_merge) onto their vCPU's pages:
 *
 *   call                       ftrace:function (ip, parent_ip), or with
 *                              its return traced (--graph)
 *                              ftrace:funcgraph_entry (func, depth)
 *   return (--graph)           ftrace:funcgraph_exit (func, depth,
 *                              calltime and rettime in ns)
 *   VM exit                    earlytrace:vm_exit
 *   mark, drops (CPU 0)        earlytrace:mark, earlytrace:drops
 *   META, END (CPU 0)          earlytrace:run first, earlytrace:end last
 *
 * Depth is the number of traced calls open on the vCPU, paired with
 * returns as `--format graph` pairs them. What trace.dat cannot say is
 * counted, written as a last earlytrace:mark and left in report_note().
 * Memory: the page buffers, the open frames and the reader's notes.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/report/report.h"
#include "vmm/report/report_util.h"
#include "vmm/report/tracedat/tracedat_events.h"
#include "vmm/report/tracedat/tracedat_file.h"
#include "vmm/trace/event.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"

#define MAX_DEPTH (1u << 20) /* deeper calls are not paired with returns */

struct open_call {
	uint64_t ip, tsc;
};

struct cpu_stack {
	struct open_call *calls;
	size_t nr, cap;
};

/* What trace.dat cannot hold, counted as the events go. */
struct losses {
	uint64_t graph_parents;	  /* parent ips of calls written as funcgraph_entry */
	uint64_t unmatched;	  /* returns whose call is not in the file */
	uint64_t unwound;	  /* returns of abandoned frames, written as plain ones */
	uint64_t cpu_over;	  /* events of vCPUs the file cannot hold */
	uint64_t backwards;	  /* events written at an earlier event's time */
	uint64_t cut;		  /* texts cut to fit a page */
	uint64_t wrapped;	  /* at TSCs whose time in ns readers cannot compute */
};

struct conv {
	struct trace_reader *r;
	const struct trace_info *in;
	struct tracedat_clock clock;
	struct tracedat_kallsyms_stats kallsyms;
	uint32_t nr_cpus;
	uint64_t first_ts, last_ts;
	struct cpu_stack *stacks;
	struct losses losses;
	uint8_t buf[TRACEDAT_MAX_PAYLOAD];
};

static uint8_t flags_of(const struct et_ring_record *e)
{
	/* The VMM records while the guest cannot take interrupts (before
	 * the handoff) or on an exit; the guest ring has no flags. */
	return !et_rec_is_exit(e) && trace_event_source(e) == ET_REC_SRC_GUEST
		       ? 0
		       : TRACEDAT_FLAG_IRQS_OFF;
}

static int add(struct tracedat_pages *p, uint32_t cpu, uint64_t ts, struct conv *c, uint32_t len)
{
	return tracedat_pages_add(p, cpu, ts, c->buf, len);
}

static int push(struct cpu_stack *s, uint64_t ip, uint64_t tsc)
{
	if (s->nr == MAX_DEPTH)
		return 0;
	if (s->nr == s->cap) {
		struct open_call *n = array_grow(s->calls, &s->cap, sizeof(*n), 64);

		if (!n)
			return et_error("out of memory");
		s->calls = n;
	}
	s->calls[s->nr++] = (struct open_call){ ip, tsc };
	return 0;
}

static int call_event(struct conv *c, struct tracedat_pages *p, const struct et_ring_record *e)
{
	struct cpu_stack *s = &c->stacks[e->cpu];
	uint32_t len;

	if (!(e->flags & ET_REC_F_RET_TRACED)) {
		len = tracedat_ev_function(c->buf, flags_of(e), e->ip, e->parent_ip);
		return add(p, e->cpu, e->tsc, c, len);
	}
	if (e->parent_ip)
		c->losses.graph_parents++;
	len = tracedat_ev_graph_entry(c->buf, flags_of(e), e->ip, (int32_t)s->nr);
	if (add(p, e->cpu, e->tsc, c, len))
		return -1;
	return push(s, e->ip, e->tsc);
}

static int return_event(struct conv *c, struct tracedat_pages *p, const struct et_ring_record *e)
{
	struct cpu_stack *s = &c->stacks[e->cpu];
	uint64_t call_tsc = e->tsc;
	uint32_t len;

	/* As --format graph pairs them: only with the innermost open call. */
	if (s->nr && s->calls[s->nr - 1].ip == e->ip)
		call_tsc = s->calls[--s->nr].tsc;
	else
		c->losses.unmatched++;
	if (e->flags & ET_REC_F_UNWOUND)
		c->losses.unwound++;
	len = tracedat_ev_graph_exit(c->buf, flags_of(e), e->ip, (int32_t)s->nr,
				     tracedat_clock_ns(&c->clock, call_tsc),
				     tracedat_clock_ns(&c->clock, e->tsc));
	return add(p, e->cpu, e->tsc, c, len);
}

static int exit_event(struct conv *c, struct tracedat_pages *p, const struct et_ring_record *e)
{
	struct et_exit x = et_exit_unpack(e);
	char desc[192];
	uint32_t len = tracedat_ev_vm_exit(c->buf, flags_of(e), &x, e->ip,
					   event_exit_text(e, desc, sizeof(desc)), &c->losses.cut);

	return add(p, x.cpu, e->tsc, c, len);
}

static int note_event(struct conv *c, struct tracedat_pages *p, const struct trace_note *n)
{
	uint32_t len;

	if (tracedat_clock_wraps(&c->clock, n->tsc))
		c->losses.wrapped++;
	/* The guest kernel's trace_printk text as ftrace:print on its CPU; a
	 * raw event's format is not known here, so it goes as a mark. */
	if (n->type == TRACE_REC_KEVENT && n->kevent_kind != TRACE_KEVENT_RAW &&
	    n->cpu < c->nr_cpus)
		return add(p, n->cpu, n->tsc, c,
			   tracedat_ev_print(c->buf, 0, n->ip, n->text, &c->losses.cut));
	if (n->type == TRACE_REC_DROPS)
		len = tracedat_ev_drops(c->buf, TRACEDAT_FLAG_IRQS_OFF, n->dropped,
					n->dropped_total, n->text, &c->losses.cut);
	else
		len = tracedat_ev_mark(c->buf, TRACEDAT_FLAG_IRQS_OFF, n->text, &c->losses.cut);

	return add(p, 0, n->tsc, c, len);
}

static int event(struct conv *c, struct tracedat_pages *p, const struct et_ring_record *e)
{
	if (et_rec_cpu(e) >= c->nr_cpus) {
		c->losses.cpu_over++;
		return 0;
	}
	if (tracedat_clock_wraps(&c->clock, e->tsc))
		c->losses.wrapped++;
	if (et_rec_is_exit(e))
		return exit_event(c, p, e);
	if (et_rec_kind(e) == ET_REC_RET)
		return return_event(c, p, e);
	/* Calls, and kinds this version does not know, as the ftrace
	 * report shows them. */
	return call_event(c, p, e);
}

/* "N what" appended to buf, comma-separated, when N is not 0. */
static void count_part(char *buf, size_t len, uint64_t n, const char *what)
{
	size_t at = strlen(buf);

	if (n && at < len)
		snprintf(buf + at, len - at, "%s%" PRIu64 " %s", at ? "; " : "", n, what);
}

/* What could not be expressed, in words ("" when nothing). */
static const char *losses_text(const struct conv *c, char *buf, size_t len)
{
	const struct losses *l = &c->losses;

	buf[0] = '\0';
	count_part(buf, len, l->graph_parents,
		   "parent ips of calls written as funcgraph_entry, which has no parent field");
	count_part(buf, len, l->unmatched,
		   "returns whose call is not in the trace (calltime set to rettime)");
	count_part(buf, len, l->unwound, "unwound frames, written as ordinary returns");
	count_part(buf, len, l->cpu_over, "events of vCPUs above 1023, left out");
	count_part(buf, len, l->backwards,
		   "events earlier than the one before on their vCPU, written at its time");
	count_part(buf, len, l->cut, "texts cut to fit a 4 KiB page");
	count_part(buf, len, l->wrapped,
		   "events at TSCs past 2^64 ns, where trace-cmd's conversion to ns wraps "
		   "(shown at wrong times)");
	count_part(buf, len, c->kallsyms.renamed, "symbol names with spaces, written with '?'");
	count_part(buf, len, c->kallsyms.skipped, "symbols not written to kallsyms");
	return buf;
}

static int run_event(struct conv *c, struct tracedat_pages *p)
{
	const struct trace_info *in = c->in;
	struct tracedat_run_info run = {
		in->tsc_khz,
		in->start_time_ns,
		in->tool_version,
		in->kernel_path,
		in->build_id_hex[0] ? in->build_id_hex : "none",
		in->mode,
		in->symbol_source,
	};

	return add(p, 0, c->first_ts, c,
		   tracedat_ev_run(c->buf, TRACEDAT_FLAG_IRQS_OFF, &run, &c->losses.cut));
}

static int end_events(struct conv *c, struct tracedat_pages *p)
{
	const struct trace_info *in = c->in;
	char state[512], losses[1024];
	struct tracedat_end_info end = {
		in->end_recorded, in->end_written, in->end_dropped, in->end_lost, in->has_end,
		trace_reader_state(c->r, state, sizeof(state)),
	};
	char text[1100];

	c->losses.backwards = p->backwards;
	if (losses_text(c, losses, sizeof(losses))[0]) {
		snprintf(text, sizeof(text), "trace-dat could not express: %s", losses);
		if (add(p, 0, c->last_ts, c,
			tracedat_ev_mark(c->buf, TRACEDAT_FLAG_IRQS_OFF, text, &c->losses.cut)))
			return -1;
	}
	return add(p, 0, c->last_ts, c,
		   tracedat_ev_end(c->buf, TRACEDAT_FLAG_IRQS_OFF, &end, &c->losses.cut));
}

/* Every event of the trace onto the pages (tracedat_emit_fn). */
static int emit(void *ctx, struct tracedat_pages *p)
{
	struct conv *c = ctx;
	struct trace_merge *m = NULL;
	struct note_merge notes;
	const struct trace_note *n;
	struct et_ring_record e;
	int ret;

	memset(&c->losses, 0, sizeof(c->losses));
	for (uint32_t cpu = 0; cpu < c->nr_cpus; cpu++)
		c->stacks[cpu].nr = 0;
	note_merge_init(&notes, c->r);
	if (run_event(c, p) || trace_merge_open(c->r, &m))
		return -1;
	while ((ret = trace_merge_next(m, &e)) > 0) {
		while ((n = note_merge_before(&notes, e.tsc)))
			if (note_event(c, p, n))
				goto fail;
		if (event(c, p, &e))
			goto fail;
	}
	trace_merge_close(m);
	if (ret < 0)
		return -1;
	while ((n = note_merge_rest(&notes)))
		if (note_event(c, p, n))
			return -1;
	return end_events(c, p);
fail:
	trace_merge_close(m);
	return -1;
}

/* The earliest and latest time of anything written (events and notes). */
static void time_span(struct conv *c)
{
	size_t nr;
	const struct trace_note *notes = trace_reader_notes(c->r, &nr);
	bool any = c->in->nr_events > 0;

	c->first_ts = any ? c->in->min_tsc : 0;
	c->last_ts = any ? c->in->max_tsc : 0;
	if (nr) {
		if (!any || notes[0].tsc < c->first_ts)
			c->first_ts = notes[0].tsc;
		if (!any || notes[nr - 1].tsc > c->last_ts)
			c->last_ts = notes[nr - 1].tsc;
	}
}

int report_tracedat(struct trace_reader *r, FILE *out)
{
	struct tracedat_system sys = { TRACEDAT_EARLYTRACE_SYSTEM, tracedat_earlytrace_formats,
				       tracedat_nr_earlytrace_formats };
	struct conv *c = calloc(1, sizeof(*c));
	struct tracedat_desc d = { 0 };
	struct tracedat_result res;
	char losses[1024];
	int ret = -1;

	if (!c)
		return et_error("out of memory");
	c->r = r;
	c->in = trace_reader_info(r);
	c->nr_cpus = c->in->nr_cpus ? c->in->nr_cpus : 1;
	if (c->nr_cpus > TRACEDAT_MAX_CPUS)
		c->nr_cpus = TRACEDAT_MAX_CPUS;
	c->stacks = calloc(c->nr_cpus, sizeof(*c->stacks));
	if (!c->stacks) {
		et_error("out of memory");
		goto out;
	}
	tracedat_clock_init(&c->clock, c->in->tsc_khz);
	if (c->in->has_origin)
		tracedat_clock_anchor(&c->clock, c->in->origin_tsc);
	tracedat_kallsyms(trace_reader_symtab(r), NULL, &c->kallsyms);
	time_span(c);

	d.nr_cpus = c->nr_cpus;
	d.clock = c->clock;
	d.symbols = trace_reader_symtab(r);
	/* libtraceevent names pid 0 "<idle>" whatever this says. */
	d.cmdlines = "0 swapper\n";
	d.systems = &sys;
	d.nr_systems = 1;
	if (tracedat_write(out, &d, emit, c, &res))
		goto out;
	if (losses_text(c, losses, sizeof(losses))[0])
		report_set_note("trace-dat could not express: %s", losses);
	ret = 0;
out:
	if (c->stacks)
		for (uint32_t cpu = 0; cpu < c->nr_cpus; cpu++)
			free(c->stacks[cpu].calls);
	free(c->stacks);
	free(c);
	return ret;
}
