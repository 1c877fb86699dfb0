/* SPDX-License-Identifier: MIT */
/*
 * `earlytrace report`: converts a trace file into ftrace text, Chrome
 * trace JSON, CSV or a summary. The trace file is self-contained (symbols
 * included), so the kernel is not needed.
 */
#include "vmm/cmd/report.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vmm/cmd/cli.h"
#include "vmm/run/end.h"
#include "vmm/trace/read_progress.h"
#include "vmm/util/error.h"
#include "vmm/util/output_file.h"

const char cli_report_usage[] =
	"Usage: earlytrace report TRACEFILE [OPTIONS]\n"
	"\n"
	"Converts a trace file written by a traced run. Works on files of runs\n"
	"that crashed, timed out or were killed (up to their last record).\n"
	"\n"
	"  -f, --format FORMAT  ftrace (default): the text of Linux's function\n"
	"                       tracer; json: Chrome Trace Event JSON for\n"
	"                       Perfetto UI or chrome://tracing; csv: one row\n"
	"                       per call, mark and drop; summary: call counts\n"
	"                       per function and totals; graph: ftrace's\n"
	"                       function_graph text with durations; folded:\n"
	"                       stacks for flamegraph.pl (graph and folded need\n"
	"                       a trace recorded with --graph); trace-dat:\n"
	"                       trace-cmd's trace.dat, for trace-cmd report and\n"
	"                       KernelShark (binary: use -o FILE.dat)\n"
	"  -o, --output FILE    write there instead of standard output (whole:\n"
	"                       a temporary file renamed over FILE at the end;\n"
	"                       never the trace file itself); without --format,\n"
	"                       FILE's extension picks it: .dat trace-dat, .json\n"
	"                       json, .csv csv\n"
	"      --raw-durations  graph, json, folded: durations as recorded, the\n"
	"                       tracer's own exits included (by default they are\n"
	"                       taken out, as the file's OVERHEAD record says)\n"
	"  -h, --help           show this help\n";

static const struct option report_options_table[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "raw-durations", no_argument, NULL, 'R' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cli_parse_report(int argc, char **argv, struct report_options *opts)
{
	bool format_given = false;
	int c;

	memset(opts, 0, sizeof(*opts));
	opts->format = REPORT_FTRACE;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", report_options_table, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (report_parse_format(optarg, &opts->format))
				return -1;
			format_given = true;
			break;
		case 'o':
			opts->output = optarg;
			break;
		case 'R':
			opts->raw_durations = true;
			break;
		case 'h':
			opts->help = true;
			return 0;
		default:
			return cli_bad_option("report", argc, argv, c);
		}
	}
	if (cli_trace_file_operand("report", argc, argv, &opts->trace_file))
		return -1;
	/* -o out.dat means trace.dat, unless --format says otherwise. */
	if (!format_given && opts->output)
		report_format_of_path(opts->output, &opts->format);
	return 0;
}

int report_to_file(const char *trace_path, enum report_format fmt, const char *out_path)
{
	struct trace_reader *r;
	struct output_file of = { 0 };
	struct read_progress progress;
	int ret;

	read_progress_start(&progress);
	if (trace_reader_open(&r, trace_path)) {
		read_progress_stop(&progress);
		return -1;
	}
	read_progress_file(&progress, r);
	if (output_file_open(&of, out_path)) {
		read_progress_stop(&progress);
		trace_reader_close(r);
		return -1;
	}
	read_progress_output(&progress, of.f);
	ret = report_write(r, fmt, of.f);
	if (ret)
		output_file_abort(&of);
	else
		ret = output_file_commit(&of);
	read_progress_stop(&progress);
	if (!ret && report_note()[0])
		et_note("%s", report_note());
	trace_reader_close(r);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_options opts;
	struct trace_reader *r = NULL;
	const struct trace_info *in;
	struct output_file of = { 0 };
	struct read_progress progress;
	FILE *out = stdout;
	int ret;

	if (cli_parse_report(argc, argv, &opts)) {
		et_print_error();
		return EXIT_STATUS_ERROR;
	}
	if (opts.help) {
		fputs(cli_report_usage, stdout);
		return 0;
	}
	if (output_refuse_inputs("-o", opts.output, &opts.trace_file, 1)) {
		et_print_error();
		return EXIT_STATUS_ERROR;
	}
	/* From the open on: its validating pass reads the whole file. */
	read_progress_start(&progress);
	if (trace_reader_open(&r, opts.trace_file)) {
		read_progress_stop(&progress);
		et_print_error();
		return EXIT_STATUS_ERROR;
	}
	read_progress_file(&progress, r);
	if (opts.output) {
		if (output_file_open(&of, opts.output)) {
			read_progress_stop(&progress);
			et_print_error();
			trace_reader_close(r);
			return EXIT_STATUS_ERROR;
		}
		out = of.f;
	}
	report_set_raw_durations(opts.raw_durations);
	read_progress_output(&progress, out);
	ret = report_write(r, opts.format, out);
	if (opts.output) {
		if (ret)
			output_file_abort(&of);
		else
			ret = output_file_commit(&of);
	}
	read_progress_stop(&progress);
	in = trace_reader_info(r);
	if (!ret && report_note()[0])
		et_note("%s", report_note());
	if (!ret && in->doubt[0])
		et_warn("warning: %s: %s", opts.trace_file, in->doubt);
	if (!ret && in->truncated)
		et_note("%s is truncated after %llu events", opts.trace_file,
			(unsigned long long)in->nr_events);
	trace_reader_close(r);
	if (ret) {
		et_print_error();
		return EXIT_STATUS_ERROR;
	}
	return 0;
}
