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

#include "vmm/tracefile/trace_file.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every report format, one row each: X(ID, name for --format, the file
 * extension that asks for it or NULL, the writer). A new format is a row
 * here and its writer; the enum, the writers' declarations, --format's
 * names, -o's extensions and report_write() all come from these rows.
 */
#define REPORT_FORMATS(X)                                                              \
	X(FTRACE, "ftrace", NULL, report_ftrace)	/* Linux's function-tracer text */ \
	X(JSON, "json", ".json", report_json)		/* Chrome Trace Event JSON */     \
	X(CSV, "csv", ".csv", report_csv)						\
	X(SUMMARY, "summary", NULL, report_summary)					\
	X(GRAPH, "graph", NULL, report_graph)	/* function_graph text (--graph) */ \
	X(FOLDED, "folded", NULL, report_folded) /* flamegraph.pl stacks (--graph) */ \
	X(TRACE_DAT, "trace-dat", ".dat", report_tracedat) /* trace-cmd, KernelShark */

enum report_format {
#define REPORT_FORMAT_ID(id, name, ext, writer) REPORT_##id,
	REPORT_FORMATS(REPORT_FORMAT_ID)
#undef REPORT_FORMAT_ID
	REPORT_FORMAT_COUNT
};

/* A format by its name (REPORT_FORMATS); 0, or -1 with an error. */
int report_parse_format(const char *name, enum report_format *fmt);

/* The format a file name asks for by its extension (REPORT_FORMATS:
 * ".dat", ".json", ".csv"); false for any other name. */
bool report_format_of_path(const char *path, enum report_format *fmt);

/* Writes the whole report for r (from its first record) to out, as each
 * writer does; 0, or -1 with an error (a corrupt record, or out failing). */
int report_write(struct trace_reader *r, enum report_format fmt, FILE *out);
#define REPORT_FORMAT_WRITER(id, name, ext, writer) int writer(struct trace_reader *r, FILE *out);
REPORT_FORMATS(REPORT_FORMAT_WRITER)
#undef REPORT_FORMAT_WRITER

/* Durations in graph, json and folded reports: without the tracer's own
 * cost where the file says it (the default), or as recorded (raw). */
void report_set_raw_durations(bool raw);
bool report_raw_durations(void);

/* A line the last report_write() left for the user (say, what the format
 * could not express), "" when none: part of the report's result, not
 * printed by the writer. The command prints it with et_note() once the
 * report is complete and in place (docs/architecture.md, "Who prints"). */
const char *report_note(void);
void report_set_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The overhead clock's clamps as the note, unless another note was set. */
struct overhead_clock;
void report_note_clamped(const struct overhead_clock *c);

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_REPORT_H */
