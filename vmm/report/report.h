/* SPDX-License-Identifier: MIT */
/*
 * Reports from a trace file: Linux's function-tracer text, Chrome Trace
 * Event JSON (Perfetto, chrome://tracing), CSV and a summary. ftrace, json
 * and csv stream the events record by record (memory does not grow with the
 * trace); marks and drops are merged in by time. Functions are named with
 * the symbols stored in the trace file, so the kernel is not needed.
 */
#ifndef VMM_REPORT_REPORT_H
#define VMM_REPORT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "vmm/trace/trace_file.h"

#ifdef __cplusplus
extern "C" {
#endif

enum report_format {
	REPORT_FTRACE,
	REPORT_JSON,
	REPORT_CSV,
	REPORT_SUMMARY,
	REPORT_GRAPH,  /* ftrace's function_graph text (a --graph trace) */
	REPORT_FOLDED, /* folded stacks for flamegraph.pl (a --graph trace) */
	REPORT_TRACE_DAT, /* trace-cmd's trace.dat, for trace-cmd and KernelShark */
};

/* "ftrace", "json", "csv", "summary", "graph", "folded" or "trace-dat";
 * 0, or -1 with an error. */
int report_parse_format(const char *name, enum report_format *fmt);

/* The format a file name asks for by its extension: ".dat" trace-dat,
 * ".json" json, ".csv" csv; false for any other name. */
bool report_format_of_path(const char *path, enum report_format *fmt);

/* Each writes the whole report for r (from its first record) to out;
 * 0, or -1 with an error (a corrupt record, or out failing). */
int report_write(struct trace_reader *r, enum report_format fmt, FILE *out);
int report_ftrace(struct trace_reader *r, FILE *out);
int report_json(struct trace_reader *r, FILE *out);
int report_csv(struct trace_reader *r, FILE *out);
int report_summary(struct trace_reader *r, FILE *out);
int report_graph(struct trace_reader *r, FILE *out);
int report_folded(struct trace_reader *r, FILE *out);
int report_tracedat(struct trace_reader *r, FILE *out); /* vmm/report/tracedat/ */

/* A line the last report_write() left for the user (say, what the format
 * could not express), "" when none: the command prints it. */
/* Durations in graph, json and folded reports: without the tracer's own
 * cost where the file says it (the default), or as recorded (raw). */
void report_set_raw_durations(bool raw);
bool report_raw_durations(void);

const char *report_note(void);
void report_set_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The overhead clock's clamps as the note, unless another note was set. */
struct overhead_clock;
void report_note_clamped(const struct overhead_clock *c);

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_REPORT_H */
