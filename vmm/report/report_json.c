/* SPDX-License-Identifier: MIT */
/*
 * Chrome Trace Event Format, as Perfetto UI and chrome://tracing load it:
 *
 *   {"traceEvents":[ ... ],"displayTimeUnit":"ns","otherData":{ ... }}
 *
 * One thread-scoped instant event ("ph":"i","s":"t") per call, on pid 1
 * and tid = vCPU, named after the function, with args parent, ip and
 * source. A call whose return was recorded too (--graph) is a duration
 * instead: "ph":"B" at the call, "ph":"E" at the return, which Perfetto
 * and speedscope nest by time. B and E carry the function's name and no
 * args: speedscope names a frame after its name and args together, so
 * args would split a function by caller and make every E end a frame its
 * B did not open. Each vCPU's open B events are kept on a stack so that
 * every E closes the innermost one: a return to a frame further down
 * first ends the frames above it (abandoned without their own return), a
 * return with no open call is left out, and frames still open at the end
 * of the trace end there. VM exits are thread-scoped instants of category
 * "exit" named after what they did; marks and drops are global instant
 * events ("s":"g"). Events come in TSC order. ts is guest time since its
 * first instruction in microseconds with nanosecond decimals (TSC cycles
 * when the frequency is unknown, as otherData.clock says).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/report/report.h"
#include "vmm/report/report_util.h"
#include "vmm/trace/event.h"
#include "vmm/trace/overhead.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"

#define JSON_NAMED_CPUS 1024
#define JSON_NESTED_CPUS 256 /* vCPUs whose calls can be B/E durations */

/* The functions of a vCPU's open B events, innermost last. */
struct open_frames {
	uint64_t *ip;
	size_t nr, cap;
};

struct json_state {
	struct open_frames open[JSON_NESTED_CPUS];
	uint64_t nr_durations, nr_instant_calls;
	uint64_t ended_at_end;	  /* frames still open at the end of the trace */
	uint64_t ended_unwound;	  /* frames a return further down ended */
	uint64_t unmatched_returns; /* returns with no open call: left out */
	uint64_t last_tsc;
	struct outbuf *ob;
	const struct trace_info *in;
	struct name_cache *names;
	const struct trace_note *notes;
	size_t nr_notes, next_note;
	bool first;
	uint8_t cpus[JSON_NAMED_CPUS / 8];
	struct overhead_clock clock; /* durations without the tracer's exits */
};

static void sep(struct json_state *st)
{
	ob_str(st->ob, st->first ? "\n" : ",\n");
	st->first = false;
}

static void ts(struct json_state *st, uint64_t tsc)
{
	int64_t since = trace_time_ns(st->in, tsc);
	uint64_t t = since < 0 ? (uint64_t)-since : (uint64_t)since;

	ob_str(st->ob, "\"ts\":");
	if (since < 0)
		ob_char(st->ob, '-');
	if (st->in->tsc_khz) {
		ob_u64(st->ob, t / 1000u, 0, ' ');
		ob_char(st->ob, '.');
		ob_u64(st->ob, t % 1000u, 3, '0');
	} else {
		ob_u64(st->ob, t, 0, ' ');
	}
}

static void func_json(struct json_state *st, uint64_t ip)
{
	const char *name = name_cache_lookup(st->names, ip);

	if (name) {
		ob_json_str(st->ob, name);
	} else {
		ob_char(st->ob, '"');
		ob_hex(st->ob, ip);
		ob_char(st->ob, '"');
	}
}

static void note_event(struct json_state *st, const struct trace_note *n)
{
	struct outbuf *ob = st->ob;
	char name[160];

	sep(st);
	if (n->type == TRACE_REC_MARK) {
		ob_str(ob, "{\"name\":");
		ob_json_str(ob, n->text);
		ob_str(ob, ",\"cat\":\"mark\",\"ph\":\"i\",\"s\":\"g\",");
		ts(st, overhead_clock_note(&st->clock, n->tsc));
		ob_str(ob, ",\"pid\":1,\"tid\":0}");
		return;
	}
	if (n->type == TRACE_REC_KEVENT) {
		/* The kernel's trace_printk and other events: on their CPU. */
		ob_str(ob, "{\"name\":");
		ob_json_str(ob, n->text);
		ob_str(ob, ",\"cat\":\"kernel\",\"ph\":\"i\",\"s\":\"t\",");
		ts(st, overhead_clock_note(&st->clock, n->tsc));
		ob_str(ob, ",\"pid\":1,\"tid\":");
		ob_u64(ob, n->cpu, 0, ' ');
		ob_str(ob, "}");
		return;
	}
	snprintf(name, sizeof(name), "%" PRIu64 " events dropped", n->dropped);
	ob_str(ob, "{\"name\":");
	ob_json_str(ob, name);
	ob_str(ob, ",\"cat\":\"drop\",\"ph\":\"i\",\"s\":\"g\",");
	ts(st, overhead_clock_note(&st->clock, n->tsc));
	ob_str(ob, ",\"pid\":1,\"tid\":0,\"args\":{\"dropped\":");
	ob_u64(ob, n->dropped, 0, ' ');
	ob_str(ob, ",\"total\":");
	ob_u64(ob, n->dropped_total, 0, ' ');
	ob_str(ob, ",\"reason\":");
	ob_json_str(ob, n->text);
	ob_str(ob, "}}");
}

static void notes_before(struct json_state *st, uint64_t tsc)
{
	while (st->next_note < st->nr_notes && st->notes[st->next_note].tsc < tsc)
		note_event(st, &st->notes[st->next_note++]);
}

static void other_str(struct outbuf *ob, const char *key, const char *value, bool comma)
{
	ob_json_str(ob, key);
	ob_char(ob, ':');
	ob_json_str(ob, value);
	if (comma)
		ob_char(ob, ',');
}

static const char calls_are_instants[] =
	"no call has a traced return: every call is an instant event (a timeline shows "
	"marks; speedscope and flame views show no frames); trace with --graph for durations";

static void other_data(struct json_state *st, struct trace_reader *r)
{
	const struct trace_info *in = st->in;
	struct outbuf *ob = st->ob;
	char buf[512];
	time_t secs = (time_t)(in->start_time_ns / 1000000000u);
	struct tm tm;

	ob_str(ob, "\"otherData\":{");
	snprintf(buf, sizeof(buf), "earlytrace %s", in->tool_version);
	other_str(ob, "tool", buf, true);
	other_str(ob, "kernel", in->kernel_path, true);
	other_str(ob, "build_id", in->build_id_hex, true);
	other_str(ob, "symbols", in->symbol_source, true);
	other_str(ob, "mode", in->mode, true);
	snprintf(buf, sizeof(buf), "%" PRIu64, in->tsc_khz);
	other_str(ob, "tsc_khz", buf, true);
	snprintf(buf, sizeof(buf), "guest TSC%s; ts in %s of %s", in->tsc_khz ? "" : ", frequency unknown",
		 in->tsc_khz ? "microseconds" : "TSC cycles", trace_origin_text(in));
	other_str(ob, "clock", buf, true);
	snprintf(buf, sizeof(buf), "%" PRIu64, in->origin_tsc);
	other_str(ob, "origin_tsc", buf, true);
	{
		char what[512];

		other_str(ob, "durations",
			  overhead_describe(in, report_raw_durations(), what, sizeof(what)), true);
	}
	if (in->has_meta && gmtime_r(&secs, &tm)) {
		strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
		other_str(ob, "start_time", buf, true);
	}
	other_str(ob, "events", report_counts_text(in, buf, sizeof(buf)), true);
	report_sources_text(in, buf, sizeof(buf));
	other_str(ob, "event_sources", buf, true); /* of calls and returns */
	snprintf(buf, sizeof(buf), "%" PRIu64, in->dropped);
	other_str(ob, "dropped", buf, true);
	snprintf(buf, sizeof(buf), "%" PRIu64, in->end_lost);
	other_str(ob, "not_written", buf, true);
	/* How calls were drawn, and what the nesting had to mend. */
	snprintf(buf, sizeof(buf), "%" PRIu64 " as durations (B/E), %" PRIu64 " as instants",
		 st->nr_durations, st->nr_instant_calls);
	other_str(ob, "calls_drawn", buf, true);
	if (st->nr_instant_calls && !st->nr_durations)
		other_str(ob, "note", calls_are_instants, true);
	if (st->ended_unwound || st->ended_at_end || st->unmatched_returns) {
		snprintf(buf, sizeof(buf),
			 "%" PRIu64 " frames ended by a return further down, %" PRIu64
			 " still open at the end of the trace, %" PRIu64 " returns without an open call",
			 st->ended_unwound, st->ended_at_end, st->unmatched_returns);
		other_str(ob, "nesting", buf, true);
	}
	other_str(ob, "state", trace_reader_state(r, buf, sizeof(buf)), false);
	ob_char(ob, '}');
}

static void thread(struct json_state *st, uint32_t cpu)
{
	if (cpu < JSON_NAMED_CPUS)
		st->cpus[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
	ob_str(st->ob, ",\"pid\":1,\"tid\":");
	ob_u64(st->ob, cpu, 0, ' ');
}

static void exit_event(struct json_state *st, const struct et_ring_record *e)
{
	struct outbuf *ob = st->ob;
	struct et_exit x = et_exit_unpack(e);
	char text[192], where[192];

	sep(st);
	ob_str(ob, "{\"name\":");
	ob_json_str(ob, event_exit_text(e, text, sizeof(text)));
	ob_str(ob, ",\"cat\":\"exit\",\"ph\":\"i\",\"s\":\"t\",");
	ts(st, e->tsc);
	thread(st, x.cpu);
	ob_str(ob, ",\"args\":{\"kind\":\"");
	ob_str(ob, event_exit_kind_name(x.kind));
	ob_str(ob, "\",\"address\":\"");
	ob_hex(ob, x.addr);
	ob_str(ob, "\",\"value\":\"");
	ob_hex(ob, x.value);
	ob_str(ob, "\",\"size\":");
	ob_u64(ob, x.size, 0, ' ');
	ob_str(ob, x.write ? ",\"write\":true" : ",\"write\":false");
	ob_str(ob, ",\"ip\":\"");
	ob_hex(ob, e->ip);
	ob_str(ob, "\",\"function\":");
	ob_json_str(ob, report_symbol_offset(st->names, e->ip, where, sizeof(where)));
	ob_str(ob, "}}");
}

static int push_frame(struct open_frames *f, uint64_t ip)
{
	if (f->nr == f->cap) {
		uint64_t *p = array_grow(f->ip, &f->cap, sizeof(*p), 64);

		if (!p)
			return et_error("out of memory");
		f->ip = p;
	}
	f->ip[f->nr++] = ip;
	return 0;
}

/* "E" for the innermost open frame of cpu, named as its B was. */
static void end_event(struct json_state *st, uint32_t cpu, uint64_t tsc)
{
	struct open_frames *f = &st->open[cpu];

	sep(st);
	ob_str(st->ob, "{\"name\":");
	func_json(st, f->ip[--f->nr]);
	ob_str(st->ob, ",\"cat\":\"call\",\"ph\":\"E\",");
	ts(st, tsc);
	thread(st, cpu);
	ob_char(st->ob, '}');
}

/* A call: the beginning of a duration when its return was recorded
 * (name only), else an instant with its parent, ip and source. */
static int call_event(struct json_state *st, const struct et_ring_record *e)
{
	struct outbuf *ob = st->ob;
	uint32_t cpu = et_rec_cpu(e);

	sep(st);
	ob_str(ob, "{\"name\":");
	func_json(st, e->ip);
	if ((e->flags & ET_REC_F_RET_TRACED) && cpu < JSON_NESTED_CPUS) {
		if (push_frame(&st->open[cpu], e->ip))
			return -1;
		st->nr_durations++;
		ob_str(ob, ",\"cat\":\"call\",\"ph\":\"B\",");
		ts(st, e->tsc);
		thread(st, cpu);
		ob_char(ob, '}');
		return 0;
	}
	st->nr_instant_calls++;
	ob_str(ob, ",\"cat\":\"call\",\"ph\":\"i\",\"s\":\"t\",");
	ts(st, e->tsc);
	thread(st, cpu);
	ob_str(ob, ",\"args\":{\"parent\":");
	func_json(st, e->parent_ip);
	ob_str(ob, ",\"ip\":\"");
	ob_hex(ob, e->ip);
	ob_str(ob, "\",\"source\":\"");
	ob_str(ob, trace_event_source_name(e));
	ob_str(ob, "\"}}");
	return 0;
}

/* A return ends its frame, and first every frame opened above it (their
 * own returns were not seen); one with no open frame is left out. */
static void return_event(struct json_state *st, const struct et_ring_record *e)
{
	uint32_t cpu = et_rec_cpu(e);
	struct open_frames *f;
	size_t i;

	if (cpu >= JSON_NESTED_CPUS) {
		st->unmatched_returns++;
		return;
	}
	f = &st->open[cpu];
	for (i = f->nr; i > 0 && f->ip[i - 1] != e->ip; i--)
		;
	if (!i) {
		st->unmatched_returns++;
		return;
	}
	while (f->nr > i) {
		st->ended_unwound++;
		end_event(st, cpu, e->tsc);
	}
	end_event(st, cpu, e->tsc);
}

/* Frames still open when the trace ends end with it, innermost first. */
static void end_open_frames(struct json_state *st)
{
	for (uint32_t cpu = 0; cpu < JSON_NESTED_CPUS; cpu++) {
		while (st->open[cpu].nr) {
			st->ended_at_end++;
			end_event(st, cpu, st->last_tsc);
		}
	}
}

int report_json(struct trace_reader *r, FILE *out)
{
	struct json_state st = { 0 };
	struct trace_merge *m = NULL;
	struct et_ring_record ev;
	struct outbuf *ob;
	int ret;

	ob = st.ob = malloc(sizeof(*st.ob));
	st.names = name_cache_new(trace_reader_symtab(r));
	if (!ob || !st.names) {
		free(ob);
		free(st.names);
		return et_error("out of memory");
	}
	if (trace_merge_open(r, &m)) {
		free(ob);
		free(st.names);
		return -1;
	}
	ob->f = out;
	ob->len = 0;
	st.in = trace_reader_info(r);
	st.notes = trace_reader_notes(r, &st.nr_notes);
	st.first = true;
	ob_str(ob, "{\"traceEvents\":[");
	sep(&st);
	ob_str(ob, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
		   "\"args\":{\"name\":\"guest\"}}");
	overhead_clock_init(&st.clock, st.in, report_raw_durations());
	while ((ret = trace_merge_next(m, &ev)) > 0) {
		notes_before(&st, ev.tsc);
		/* From here on the event's time is the one without the
		 * tracer's exits (the zero stays the guest's first instruction):
		 * frames open, nest and close on it. */
		ev.tsc = overhead_clock_event(&st.clock, &ev);
		st.last_tsc = ev.tsc;
		if (et_rec_is_exit(&ev))
			exit_event(&st, &ev);
		else if (et_rec_kind(&ev) == ET_REC_RET)
			return_event(&st, &ev);
		else if (call_event(&st, &ev))
			ret = -1;
		if (ret < 0)
			break;
	}
	trace_merge_close(m);
	report_note_clamped(&st.clock);
	if (ret == 0) {
		while (st.next_note < st.nr_notes) {
			uint64_t at = overhead_clock_note(&st.clock, st.notes[st.next_note].tsc);

			if (at > st.last_tsc)
				st.last_tsc = at;
			note_event(&st, &st.notes[st.next_note++]);
		}
		end_open_frames(&st);
		for (unsigned cpu = 0; cpu < JSON_NAMED_CPUS; cpu++) {
			if (!(st.cpus[cpu / 8] & (1u << (cpu % 8))))
				continue;
			sep(&st);
			ob_printf(ob, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
				      "\"args\":{\"name\":\"vCPU %u\"}}",
				  cpu, cpu);
		}
		ob_str(ob, "\n],\n\"displayTimeUnit\":\"ns\",\n");
		other_data(&st, r);
		ob_str(ob, "}\n");
		ret = ob_finish(ob);
	} else {
		ob_flush(ob);
	}
	for (uint32_t cpu = 0; cpu < JSON_NESTED_CPUS; cpu++)
		free(st.open[cpu].ip);
	free(ob);
	free(st.names);
	if (ret == 0 && st.nr_instant_calls && !st.nr_durations)
		report_set_note("json: %s", calls_are_instants);
	return ret;
}
