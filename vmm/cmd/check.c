/* SPDX-License-Identifier: MIT */
/*
 * `earlytrace check`: evaluates an expectations file (docs/ci-howto.md)
 * over a trace file and reports in KTAP. Also the back end of
 * `earlytrace trace --expect`.
 */
#include "vmm/cmd/check.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/check/ktap.h"
#include "vmm/cmd/cli.h"
#include "vmm/run/end.h"
#include "vmm/trace/read_progress.h"
#include "vmm/util/error.h"
#include "vmm/util/output_file.h"

const char cli_check_usage[] =
	"Usage: earlytrace check TRACEFILE --expect FILE [OPTIONS]\n"
	"\n"
	"Checks a trace file against an expectations file, one assertion a line,\n"
	"and reports each as a KTAP test result (the kernel's test output format):\n"
	"\n"
	"  called FUNC                    FUNC is called\n"
	"  not-called FUNC                FUNC is never called\n"
	"  before A B                     A's first call comes before B's\n"
	"  calls FUNC ==|>=|<= N          FUNC is called exactly, at least or at most\n"
	"                                 N times\n"
	"  reached FUNC within N events   FUNC is among the first N calls\n"
	"  reached FUNC within T UNIT     ...within T ns|us|ms|s of guest time\n"
	"  handoff [guest-ring|SYMBOL]    the guest took tracing over (with guestlib's\n"
	"                                 ring, or its ftrace when it reached SYMBOL)\n"
	"  no-drops                       no event was dropped or lost\n"
	"\n"
	"FUNC is a function name or a glob ('ct_*'), named with the trace file's\n"
	"symbols; '#' starts a comment. Order is guest time (TSC), which counts\n"
	"from the guest's first instruction. docs/ci-howto.md has the details.\n"
	"\n"
	"  -e, --expect FILE   the expectations (required)\n"
	"  -o, --output FILE   write the KTAP report there instead of standard output\n"
	"  -h, --help          show this help\n"
	"\n"
	"Exit status: 0 when every assertion passed; 5 when one failed or could\n"
	"not be decided on this trace; 1 on bad options, an unreadable trace file\n"
	"or a malformed expectations file (nothing is checked then).\n";

static const struct option check_options_table[] = {
	{ "expect", required_argument, NULL, 'e' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cli_parse_check(int argc, char **argv, struct check_options *opts)
{
	int c;

	memset(opts, 0, sizeof(*opts));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:o:h", check_options_table, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (opts->expect)
				return et_error("--expect given twice (one expectations file per "
						"check)");
			opts->expect = optarg;
			break;
		case 'o':
			opts->output = optarg;
			break;
		case 'h':
			opts->help = true;
			return 0;
		default:
			return cli_bad_option("check", argc, argv, c);
		}
	}
	if (cli_trace_file_operand("check", argc, argv, &opts->trace_file))
		return -1;
	if (!opts->expect)
		return et_error("check: --expect FILE is required");
	return 0;
}

static enum ktap_result ktap_of(enum expect_status s)
{
	return s == EXPECT_PASS ? KTAP_PASS : s == EXPECT_FAIL ? KTAP_FAIL : KTAP_ERROR;
}

static void write_report(struct trace_reader *r, const char *trace_path,
			 const struct expect_list *l, const struct expect_outcome *o,
			 const struct expect_facts *facts, FILE *out, struct ktap *k)
{
	const struct trace_info *in = trace_reader_info(r);
	char state[512];

	ktap_begin(k, out);
	ktap_diag(k, "earlytrace check: %s on %s", l->name, trace_path);
	ktap_diag(k, "trace: kernel %s, %" PRIu64 " calls in %" PRIu64 " events, %" PRIu64
		     " dropped; %s",
		  in->kernel_path[0] ? in->kernel_path : "(unknown)", facts->calls, in->nr_events,
		  in->dropped, trace_reader_state(r, state, sizeof(state)));
	if (facts->unnamed)
		ktap_diag(k, "trace: %" PRIu64 " call%s at addresses no symbol of the file covers",
			  facts->unnamed, facts->unnamed == 1 ? "" : "s");
	ktap_plan(k, (unsigned)l->nr);
	for (size_t i = 0; i < l->nr; i++) {
		const struct expect *e = &l->items[i];

		/* What was found goes on '#' lines before the result, so the
		 * result line is the assertion alone: the same test name in
		 * every run, whatever the trace held. */
		if (o[i].status != EXPECT_PASS)
			ktap_diag(k, "%s:%u: expected %s", l->name, e->line, o[i].expected);
		if (o[i].detail[0])
			ktap_diag(k, "%s:%u: %s", l->name, e->line, o[i].detail);
		ktap_result(k, ktap_of(o[i].status), e->text, NULL);
	}
}

int check_trace(const char *trace_path, const char *label, const struct expect_list *l,
		FILE *out)
{
	struct trace_reader *r = NULL;
	struct expect_outcome *o;
	struct expect_facts facts;
	struct read_progress progress;
	struct ktap k;
	int end;

	read_progress_start(&progress);
	if (trace_reader_open(&r, trace_path)) {
		read_progress_stop(&progress);
		return EXIT_STATUS_ERROR;
	}
	read_progress_file(&progress, r);
	o = calloc(l->nr ? l->nr : 1, sizeof(*o));
	if (!o) {
		read_progress_stop(&progress);
		trace_reader_close(r);
		et_error("out of memory");
		return EXIT_STATUS_ERROR;
	}
	if (expect_evaluate(l, r, o, &facts)) {
		read_progress_stop(&progress);
		free(o);
		trace_reader_close(r);
		return EXIT_STATUS_ERROR;
	}
	read_progress_output(&progress, out);
	write_report(r, label ? label : trace_path, l, o, &facts, out, &k);
	free(o);
	end = ktap_end(&k);
	read_progress_stop(&progress);
	trace_reader_close(r);
	if (end)
		return EXIT_STATUS_ERROR;
	return k.fail || k.error ? EXIT_STATUS_EXPECT_FAILED : 0;
}

int cmd_check(int argc, char **argv)
{
	struct check_options opts;
	struct expect_list l;
	struct output_file of = { 0 };
	FILE *out = stdout;
	int status;

	et_clear_error();
	if (cli_parse_check(argc, argv, &opts)) {
		et_print_error();
		return EXIT_STATUS_ERROR;
	}
	if (opts.help) {
		fputs(cli_check_usage, stdout);
		return 0;
	}
	const char *inputs[] = { opts.trace_file, opts.expect };
	if (output_refuse_inputs("-o", opts.output, inputs, 2) ||
	    expect_parse_file(&l, opts.expect)) {
		et_print_error();
		return EXIT_STATUS_ERROR;
	}
	if (opts.output) {
		if (output_file_open(&of, opts.output)) {
			et_print_error();
			expect_list_free(&l);
			return EXIT_STATUS_ERROR;
		}
		out = of.f;
	}
	status = check_trace(opts.trace_file, NULL, &l, out);
	if (opts.output) {
		if (status == EXIT_STATUS_ERROR)
			output_file_abort(&of);
		else if (output_file_commit(&of))
			status = EXIT_STATUS_ERROR;
	}
	if (status == EXIT_STATUS_ERROR)
		et_print_error();
	expect_list_free(&l);
	return status;
}
