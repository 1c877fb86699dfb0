/* SPDX-License-Identifier: MIT */
#ifndef VMM_CMD_REPORT_H
#define VMM_CMD_REPORT_H

#include "vmm/report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

struct report_options {
	const char *trace_file;
	const char *output; /* NULL: standard output */
	enum report_format format;
	bool raw_durations; /* --raw-durations */
	bool help;
};

extern const char cli_report_usage[];

/* Parses `report`'s options (argv[0] is "report"). 0, or -1 with an error. */
int cli_parse_report(int argc, char **argv, struct report_options *opts);

/* Writes the report of the trace file at trace_path to out_path, and says
 * the report's note (report_note()) on stderr. 0, or -1 with an error. */
int report_to_file(const char *trace_path, enum report_format fmt, const char *out_path);

/* `earlytrace report TRACEFILE [--format ftrace|json|csv|summary] [--output FILE]` */
int cmd_report(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* VMM_CMD_REPORT_H */
