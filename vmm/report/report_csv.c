/* SPDX-License-Identifier: MIT */
/*
 * CSV (RFC 4180 quoting, LF line ends) for spreadsheets and data tools:
 *
 *   seconds,tsc,cpu,source,function,offset,ip,parent_function,parent_offset,parent_ip,note
 *   0.000766000,2000000,0,breakpoint,foo,0x5,0xffffffff81000105,start_kernel,0x10,0xffffffff81000010,
 *
 * One row per event in time order, with marks and drops merged in by time
 * as rows with only seconds, tsc and note. A VM exit's row has source
 * "exit", the function it happened in (function, offset, ip: the guest's
 * rip), no parent, and the exit in words as its note; a return's (from
 * --graph) has the function, the address it returned to as parent, and
 * the note "return". seconds is guest time since its first instruction
 * (trace_time_ns(), as every report; 9 decimals; empty when the TSC
 * frequency is unknown); tsc is the raw guest TSC.
 * An ip no symbol covers leaves function and offset empty; a parent ip
 * of 0 (unknown) leaves all three parent fields empty.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/report/report.h"
#include "vmm/report/report_util.h"
#include "vmm/trace/event.h"
#include "vmm/util/error.h"

static const char csv_header[] = "seconds,tsc,cpu,source,function,offset,ip,parent_function,"
				 "parent_offset,parent_ip,note\n";

static void doubled_quotes(struct outbuf *ob, const char *s)
{
	for (; *s; s++) {
		if (*s == '"')
			ob_char(ob, '"');
		ob_char(ob, *s);
	}
}

/* The field prefix + s, quoted when it holds a comma, a quote or a line
 * break (quotes doubled). */
static void field(struct outbuf *ob, const char *prefix, const char *s)
{
	static const char special[] = ",\"\r\n";

	if (!prefix[strcspn(prefix, special)] && !s[strcspn(s, special)]) {
		ob_str(ob, prefix);
		ob_str(ob, s);
		return;
	}
	ob_char(ob, '"');
	doubled_quotes(ob, prefix);
	doubled_quotes(ob, s);
	ob_char(ob, '"');
}

/* "seconds,tsc," */
static void time_fields(struct outbuf *ob, const struct trace_info *in, uint64_t tsc)
{
	if (in->tsc_khz) {
		int64_t since = trace_time_ns(in, tsc);
		uint64_t t = since < 0 ? (uint64_t)-since : (uint64_t)since;

		/* A note of a file without a CLOCK record can come before time zero. */
		if (since < 0)
			ob_char(ob, '-');
		ob_u64(ob, t / 1000000000u, 0, ' ');
		ob_char(ob, '.');
		ob_u64(ob, t % 1000000000u, 9, '0');
	}
	ob_char(ob, ',');
	ob_u64(ob, tsc, 0, ' ');
	ob_char(ob, ',');
}

/* "function,offset,ip" */
static void func_fields(struct outbuf *ob, struct name_cache *names, uint64_t ip)
{
	const struct symbol *s = name_cache_symbol(names, ip);

	if (s) {
		field(ob, "", s->name);
		ob_char(ob, ',');
		ob_hex(ob, ip - s->addr);
	} else {
		ob_char(ob, ',');
	}
	ob_char(ob, ',');
	ob_hex(ob, ip);
}

static void note_row(struct outbuf *ob, const struct trace_info *in, const struct trace_note *n)
{
	char prefix[48];

	time_fields(ob, in, n->tsc);
	ob_str(ob, ",,,,,,,,");
	if (n->type == TRACE_REC_MARK) {
		field(ob, "", n->text);
	} else if (n->type == TRACE_REC_KEVENT) {
		field(ob, "kernel: ", n->text);
	} else {
		snprintf(prefix, sizeof(prefix), "dropped %" PRIu64 "%s", n->dropped,
			 n->text[0] ? ": " : "");
		field(ob, prefix, n->text);
	}
	ob_char(ob, '\n');
}

int report_csv(struct trace_reader *r, FILE *out)
{
	struct name_cache *names = name_cache_new(trace_reader_symtab(r));
	struct outbuf *ob = malloc(sizeof(*ob));
	const struct trace_info *in = trace_reader_info(r);
	const struct trace_note *n;
	struct note_merge notes;
	struct trace_merge *m = NULL;
	struct et_ring_record ev;
	char text[192];
	int ret;

	if (!ob || !names || trace_merge_open(r, &m)) {
		free(ob);
		free(names);
		return !ob || !names ? et_error("out of memory") : -1;
	}
	ob->f = out;
	ob->len = 0;
	note_merge_init(&notes, r);
	ob_str(ob, csv_header);
	while ((ret = trace_merge_next(m, &ev)) > 0) {
		const struct et_ring_record *e = &ev;
		bool is_exit = et_rec_is_exit(e);

		while ((n = note_merge_before(&notes, e->tsc)))
			note_row(ob, in, n);
		time_fields(ob, in, e->tsc);
		ob_u64(ob, et_rec_cpu(e), 0, ' ');
		ob_char(ob, ',');
		ob_str(ob, is_exit ? "exit" : trace_event_source_name(e));
		ob_char(ob, ',');
		func_fields(ob, names, e->ip);
		ob_char(ob, ',');
		if (e->parent_ip && !is_exit)
			func_fields(ob, names, e->parent_ip);
		else
			ob_str(ob, ",,");
		ob_char(ob, ',');
		if (is_exit)
			field(ob, "", event_exit_text(e, text, sizeof(text)));
		else if (et_rec_kind(e) == ET_REC_RET)
			ob_str(ob, "return");
		ob_char(ob, '\n');
	}
	trace_merge_close(m);
	if (ret == 0) {
		while ((n = note_merge_rest(&notes)))
			note_row(ob, in, n);
		ret = ob_finish(ob);
	} else {
		ob_flush(ob);
	}
	free(ob);
	free(names);
	return ret;
}
