/* SPDX-License-Identifier: MIT */
/*
 * The text of Linux's function tracer (/sys/kernel/tracing/trace with
 * irq-info, as since Linux 5.13: five flag columns):
 *
 *           <idle>-0       [000] d....     0.001234: start_kernel <-x86_64_start_reservations
 *
 * Every event is shown as the boot task (<idle>-0, as ftrace names the
 * task that boots the kernel). Flags are "d...." (interrupts off) for the
 * events the VMM recorded before the handoff, where the guest cannot take
 * interrupts yet, and "....." for the guest's own events (not recorded).
 * Unknown functions print as 0x... like %ps does. Marks are trace-marker
 * lines (tracing_mark_write: TEXT) and drops are '#' comment lines, both
 * merged in by time; earlytrace adds '# earlytrace:' lines to the header.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/report/report.h"
#include "vmm/report/report_util.h"
#include "vmm/trace/event.h"
#include "vmm/util/error.h"

struct ftrace_state {
	struct outbuf *ob;
	const struct trace_info *in;
	struct name_cache *names;
	struct note_merge notes;
};

static void func(struct outbuf *ob, struct name_cache *names, uint64_t ip)
{
	const char *name = name_cache_lookup(names, ip);

	if (name)
		ob_str(ob, name);
	else
		ob_hex(ob, ip);
}

/* "TASK-PID [CPU] FLAGS TIMESTAMP: " */
static void context(struct ftrace_state *st, uint32_t cpu, const char *flags, uint64_t tsc)
{
	struct outbuf *ob = st->ob;
	int64_t since = trace_time_ns(st->in, tsc);
	/* ftrace has no negative times; nothing comes before time zero but a
	 * note of a file without a CLOCK record. */
	uint64_t t = since > 0 ? (uint64_t)since : 0;

	ob_str(ob, "          <idle>-0       [");
	ob_u64(ob, cpu, 3, '0');
	ob_str(ob, "] ");
	ob_str(ob, flags);
	ob_char(ob, ' ');
	if (st->in->tsc_khz) {
		/* %5lu.%06lu of microseconds, truncated like ftrace. */
		ob_u64(ob, t / 1000000000u, 5, ' ');
		ob_char(ob, '.');
		ob_u64(ob, t % 1000000000u / 1000u, 6, '0');
	} else {
		ob_u64(ob, t, 12, ' ');
	}
	ob_str(ob, ": ");
}


static void note_line(struct ftrace_state *st, const struct trace_note *n)
{
	struct outbuf *ob = st->ob;

	if (n->type == TRACE_REC_MARK) {
		context(st, 0, "d....", n->tsc);
		ob_str(ob, "tracing_mark_write: ");
		ob_str(ob, n->text);
		ob_char(ob, '\n');
		return;
	}
	if (n->type == TRACE_REC_KEVENT) {
		/* As ftrace prints trace_printk: the caller, then the text. */
		context(st, n->cpu, ".....", n->tsc);
		if (n->kevent_kind != TRACE_KEVENT_RAW) {
			func(ob, st->names, n->ip);
			ob_str(ob, ": ");
		}
		ob_str(ob, n->text);
		ob_char(ob, '\n');
		return;
	}
	ob_printf(ob, "# earlytrace: %" PRIu64 " events dropped (%s)", n->dropped,
		  n->text[0] ? n->text : "no reason given");
	if (n->dropped != n->dropped_total)
		ob_printf(ob, ", %" PRIu64 " in total", n->dropped_total);
	ob_char(ob, '\n');
}

/* Notes strictly before tsc (events at the same time come first). */
static void notes_before(struct ftrace_state *st, uint64_t tsc)
{
	const struct trace_note *n;

	while ((n = note_merge_before(&st->notes, tsc)))
		note_line(st, n);
}

static void header(struct ftrace_state *st, struct trace_reader *r)
{
	const struct trace_info *in = st->in;
	struct outbuf *ob = st->ob;
	uint64_t lost = in->end_lost, entries;
	char state[512];

	ob_str(ob, "# tracer: function\n#\n");
	ob_printf(ob, "# earlytrace %s: kernel %s", in->tool_version[0] ? in->tool_version : "?",
		  in->kernel_path[0] ? in->kernel_path : "(unknown)");
	if (in->build_id_hex[0])
		ob_printf(ob, " (build-id %s)", in->build_id_hex);
	ob_printf(ob, ", mode %s\n", in->mode[0] ? in->mode : "(unknown)");
	ob_printf(ob, "# earlytrace: symbols: %s\n",
		  in->symbol_source[0] ? in->symbol_source : "(unknown)");
	ob_printf(ob, "# earlytrace: %s\n", report_counts_text(in, state, sizeof(state)));
	if (in->nr_returns)
		ob_str(ob, "# earlytrace: returns are not shown here: --format graph shows them\n");
	ob_printf(ob, "# earlytrace: calls and returns by source: %s\n",
		  report_sources_text(in, state, sizeof(state)));
	if (in->nr_exits)
		ob_printf(ob, "# earlytrace: exits: %s\n",
			  report_exit_counts(in, state, sizeof(state)));
	if (in->tsc_khz)
		ob_printf(ob, "# earlytrace: clock: guest TSC at %" PRIu64
			      " kHz; TIMESTAMP is seconds of %s (guest TSC %" PRIu64 ")\n",
			  in->tsc_khz, trace_origin_text(in), in->origin_tsc);
	else
		ob_printf(ob, "# earlytrace: clock: guest TSC frequency unknown; TIMESTAMP is TSC "
			      "cycles of %s (guest TSC %" PRIu64 ")\n",
			  trace_origin_text(in), in->origin_tsc);
	ob_printf(ob, "# earlytrace: %s\n", trace_reader_state(r, state, sizeof(state)));
	if (in->dropped || lost)
		ob_printf(ob, "# earlytrace: %" PRIu64 " events dropped, %" PRIu64
			      " not written to the trace file\n",
			  in->dropped, lost);
	ob_str(ob, "#\n");
	/* Entries are the event lines below: calls, exits, kernel events and
	 * marks (returns are not shown); written adds what never reached
	 * the file. */
	entries = in->nr_events - in->nr_returns + in->nr_kevents + in->nr_marks;
	ob_printf(ob, "# entries-in-buffer/entries-written: %" PRIu64 "/%" PRIu64 "   #P:%u\n",
		  entries, entries + in->dropped + lost, in->nr_cpus ? in->nr_cpus : 1);
	ob_str(ob, "#\n");
	ob_str(ob, "#                                _-----=> irqs-off/BH-disabled\n"
		   "#                               / _----=> need-resched\n"
		   "#                              | / _---=> hardirq/softirq\n"
		   "#                              || / _--=> preempt-depth\n"
		   "#                              ||| / _-=> migrate-disable\n"
		   "#                              |||| /     delay\n"
		   "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
		   "#              | |         |   |||||     |         |\n");
}

/* A VM exit as a line of its own: "vm_exit: TEXT in FUNC+OFF". */
static void exit_line(struct ftrace_state *st, struct name_cache *tab,
		      const struct et_ring_record *e)
{
	char text[192], where[192];

	context(st, et_rec_cpu(e), "d....", e->tsc);
	ob_str(st->ob, "vm_exit: ");
	ob_str(st->ob, event_exit_text(e, text, sizeof(text)));
	ob_str(st->ob, " in ");
	ob_str(st->ob, report_symbol_offset(tab, e->ip, where, sizeof(where)));
	ob_char(st->ob, '\n');
}

int report_ftrace(struct trace_reader *r, FILE *out)
{
	struct name_cache *tab = name_cache_new(trace_reader_symtab(r));
	struct ftrace_state st = { 0 };
	const struct trace_note *n;
	struct trace_merge *m = NULL;
	struct et_ring_record ev;
	int ret;

	st.ob = malloc(sizeof(*st.ob));
	if (!st.ob || !tab) {
		free(st.ob);
		free(tab);
		return et_error("out of memory");
	}
	if (trace_merge_open(r, &m)) {
		free(st.ob);
		free(tab);
		return -1;
	}
	st.ob->f = out;
	st.ob->len = 0;
	st.in = trace_reader_info(r);
	st.names = tab;
	note_merge_init(&st.notes, r);
	header(&st, r);
	while ((ret = trace_merge_next(m, &ev)) > 0) {
		const struct et_ring_record *e = &ev;

		/* The function tracer shows entries only; returns are for
		 * --format graph. */
		if (et_rec_kind(e) == ET_REC_RET)
			continue;
		notes_before(&st, e->tsc);
		if (et_rec_is_exit(e)) {
			exit_line(&st, tab, e);
			continue;
		}
		context(&st, e->cpu, trace_event_source(e) == ET_REC_SRC_GUEST ? "....." : "d....",
			e->tsc);
		func(st.ob, tab, e->ip);
		if (e->parent_ip) {
			ob_str(st.ob, " <-");
			func(st.ob, tab, e->parent_ip);
		}
		ob_char(st.ob, '\n');
	}
	trace_merge_close(m);
	if (ret == 0) {
		while ((n = note_merge_rest(&st.notes)))
			note_line(&st, n);
		ret = ob_finish(st.ob);
	} else {
		ob_flush(st.ob);
	}
	free(st.ob);
	free(tab);
	return ret;
}
