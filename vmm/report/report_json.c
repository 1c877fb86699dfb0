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
 * nests by time. VM exits are thread-scoped instants of category "exit"
 * named after what they did; marks and drops are global instant events
 * ("s":"g"). Events come in TSC order. ts is in
 * microseconds with nanosecond decimals (raw TSC cycles since the first
 * event when the TSC frequency is unknown, as otherData.clock says).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/error.h"
#include "vmm/report/report.h"
#include "vmm/report/report_util.h"
#include "vmm/trace/overhead.h"
#include "vmm/trace/event.h"

#define JSON_NAMED_CPUS 1024

struct json_state {
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
	uint64_t t = report_tsc_ns(tsc, st->in->tsc_khz, st->in->min_tsc);

	ob_str(st->ob, "\"ts\":");
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
	other_str(ob, "clock",
		  in->tsc_khz ? "guest TSC; ts in microseconds"
			      : "guest TSC, frequency unknown; ts in TSC cycles since the first event",
		  true);
	{
		char what[320];

		other_str(ob, "durations",
			  overhead_describe(in, report_raw_durations(), what, sizeof(what)), true);
	}
	if (in->has_meta && gmtime_r(&secs, &tm)) {
		strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
		other_str(ob, "start_time", buf, true);
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, in->nr_events);
	other_str(ob, "events", buf, true);
	report_sources_text(in, buf, sizeof(buf));
	other_str(ob, "event_sources", buf, true);
	snprintf(buf, sizeof(buf), "%" PRIu64, in->dropped);
	other_str(ob, "dropped", buf, true);
	snprintf(buf, sizeof(buf), "%" PRIu64, in->end_lost);
	other_str(ob, "not_written", buf, true);
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

/* A call: an instant, or the beginning of a duration when its return
 * was recorded. */
static void call_event(struct json_state *st, const struct et_ring_record *e)
{
	struct outbuf *ob = st->ob;

	sep(st);
	ob_str(ob, "{\"name\":");
	func_json(st, e->ip);
	ob_str(ob, e->flags & ET_REC_F_RET_TRACED ? ",\"cat\":\"call\",\"ph\":\"B\","
						   : ",\"cat\":\"call\",\"ph\":\"i\",\"s\":\"t\",");
	ts(st, e->tsc);
	thread(st, e->cpu);
	ob_str(ob, ",\"args\":{\"parent\":");
	func_json(st, e->parent_ip);
	ob_str(ob, ",\"ip\":\"");
	ob_hex(ob, e->ip);
	ob_str(ob, "\",\"source\":\"");
	ob_str(ob, trace_event_source_name(e));
	ob_str(ob, "\"}}");
}

static void return_event(struct json_state *st, const struct et_ring_record *e)
{
	struct outbuf *ob = st->ob;

	sep(st);
	ob_str(ob, "{\"name\":");
	func_json(st, e->ip);
	ob_str(ob, ",\"cat\":\"call\",\"ph\":\"E\",");
	ts(st, e->tsc);
	thread(st, e->cpu);
	ob_str(ob, ",\"args\":{\"returned_to\":");
	func_json(st, e->parent_ip);
	if (e->flags & ET_REC_F_UNWOUND)
		ob_str(ob, ",\"unwound\":true");
	ob_str(ob, "}}");
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
		ev.tsc = overhead_clock_event(&st.clock, &ev);
		if (et_rec_is_exit(&ev))
			exit_event(&st, &ev);
		else if (et_rec_kind(&ev) == ET_REC_RET)
			return_event(&st, &ev);
		else
			call_event(&st, &ev);
	}
	trace_merge_close(m);
	if (ret == 0) {
		while (st.next_note < st.nr_notes)
			note_event(&st, &st.notes[st.next_note++]);
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
	free(ob);
	free(st.names);
	return ret;
}
