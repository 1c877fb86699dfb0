/* SPDX-License-Identifier: MIT */
/* `earlytrace trace`: boot a kernel and record its calls from the first
 * instruction into a trace file. */
#include "vmm/cmd_trace.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/error.h"
#include "vmm/report/report.h"
#include "vmm/stop.h"

const char cli_trace_usage[] =
	"Usage: earlytrace trace --kernel FILE [OPTIONS]\n"
	"\n"
	"Boots FILE like 'earlytrace run' and records every call to the selected\n"
	"functions from the guest's first instruction, until the guest hands over\n"
	"to its own tracer: a guestlib handoff hypercall, or a stock kernel\n"
	"reaching its handoff symbol.\n"
	"\n"
	"      --mode MODE        how calls are seen: int3 (a breakpoint on each\n"
	"                         function's entry site, a VM exit per call),\n"
	"                         trampoline (each site calls a trampoline in\n"
	"                         guest memory that records without an exit; an\n"
	"                         error if the kernel has no room for them), or\n"
	"                         auto (default: trampolines where possible)\n"
	"      --batch-events N   trampoline batch: drain into the VMM every N\n"
	"                         events (default: as many as the room holds)\n"
	"  -o, --output FILE      trace file; without one, the trace is printed\n"
	"                         in ftrace's text format when the run ends\n"
	"  -f, --filter GLOB      trace only matching functions (repeatable)\n"
	"  -n, --notrace GLOB     never trace matching functions (repeatable)\n"
	"      --buf-size SIZE    host event buffer, e.g. 64M (default 64M; 32\n"
	"                         bytes an event)\n"
	"      --overflow POLICY  stop (default: drop new events when full) or\n"
	"                         overwrite (flight recorder: keep the newest;\n"
	"                         written at the end)\n"
	"      --oneshot          record each function's first call only\n"
	"      --until SYMBOL     end the run when SYMBOL is called\n"
	"      --max-events N     end the run after N events\n"
	"      --handoff SYMBOL   for stock kernels: restore the sites and stop\n"
	"                         recording when SYMBOL runs (default ftrace_init)\n"
	"\n"
	"Machine options, as for 'earlytrace run': -k/--kernel, -i/--initrd,\n"
	"-p/--append, -m/--mem, --timeout, --cpu, --boot, --symbols, --debug-io.\n"
	"Every dropped event is counted in the file and the summary. Read the file\n"
	"with 'earlytrace report'.\n";

enum {
	OPT_OUTPUT = CLI_OPT_FIRST_FREE,
	OPT_FILTER,
	OPT_NOTRACE,
	OPT_BUF_SIZE,
	OPT_OVERFLOW,
	OPT_ONESHOT,
	OPT_UNTIL,
	OPT_MAX_EVENTS,
	OPT_HANDOFF,
	OPT_MODE,
	OPT_BATCH_EVENTS,
};

static const struct option trace_options_table[] = {
	CLI_RUN_LONG_OPTIONS,
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "notrace", required_argument, NULL, OPT_NOTRACE },
	{ "buf-size", required_argument, NULL, OPT_BUF_SIZE },
	{ "overflow", required_argument, NULL, OPT_OVERFLOW },
	{ "oneshot", no_argument, NULL, OPT_ONESHOT },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "max-events", required_argument, NULL, OPT_MAX_EVENTS },
	{ "handoff", required_argument, NULL, OPT_HANDOFF },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "batch-events", required_argument, NULL, OPT_BATCH_EVENTS },
	{ NULL, 0, NULL, 0 },
};

void trace_options_free(struct trace_options *opts)
{
	free(opts->filters);
	free(opts->notrace);
	memset(opts, 0, sizeof(*opts));
}

static int parse_count(const char *option, const char *text, uint64_t *value)
{
	char *end;

	errno = 0;
	*value = strtoull(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || *end || errno || *value == 0)
		return et_error("%s: invalid count '%s' (a positive integer)", option, text);
	return 0;
}

static int trace_option(int c, const char *arg, struct trace_options *o)
{
	switch (c) {
	case 'o':
	case OPT_OUTPUT:
		o->output = arg;
		return 0;
	case 'f':
	case OPT_FILTER:
		o->filters[o->nr_filters++] = arg;
		return 0;
	case 'n':
	case OPT_NOTRACE:
		o->notrace[o->nr_notrace++] = arg;
		return 0;
	case OPT_BUF_SIZE:
		if (cli_parse_size(arg, &o->buf_size))
			return et_error_prefix("--buf-size");
		if (o->buf_size < sizeof(struct et_ring_record))
			return et_error("--buf-size: %s holds no event (32 bytes each)", arg);
		return 0;
	case OPT_OVERFLOW:
		return overflow_policy_parse(arg, &o->overflow) ? et_error_prefix("--overflow") : 0;
	case OPT_ONESHOT:
		o->oneshot = true;
		return 0;
	case OPT_UNTIL:
		o->until = arg;
		return 0;
	case OPT_MAX_EVENTS:
		return parse_count("--max-events", arg, &o->max_events);
	case OPT_BATCH_EVENTS:
		return parse_count("--batch-events", arg, &o->batch_events);
	case OPT_MODE:
		return trace_mode_parse(arg, &o->mode) ? et_error_prefix("--mode") : 0;
	case OPT_HANDOFF:
		o->handoff = arg;
		return 0;
	default:
		return 1; /* not a trace option */
	}
}

int cli_parse_trace(int argc, char **argv, struct trace_options *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	cli_run_defaults(&o->run);
	o->output = NULL;
	o->buf_size = TRACE_DEFAULT_BUF_SIZE;
	o->overflow = OVERFLOW_STOP;
	o->handoff = TRACE_DEFAULT_HANDOFF;
	o->mode = TRACE_MODE_AUTO;
	/* No more patterns than arguments, so one allocation each suffices. */
	o->filters = calloc((size_t)argc + 1, sizeof(*o->filters));
	o->notrace = calloc((size_t)argc + 1, sizeof(*o->notrace));
	if (!o->filters || !o->notrace)
		return et_error("out of memory");

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, CLI_RUN_SHORT_OPTIONS "o:f:n:", trace_options_table,
				NULL)) != -1) {
		int ret = cli_run_option(c, optarg, &o->run);

		if (ret < 0)
			return -1;
		if (ret > 0)
			continue;
		ret = trace_option(c, optarg, o);
		if (ret < 0)
			return -1;
		if (ret > 0)
			return cli_bad_option("trace", argc, argv, c);
	}
	if (optind < argc)
		return et_error("unexpected argument '%s' (try 'earlytrace trace --help')",
				argv[optind]);
	if (!o->run.help && !o->run.list_cpu_models && !o->run.kernel)
		return et_error("trace: --kernel FILE is required");
	return 0;
}

/* Without -o: a temporary file, printed as ftrace text at the end. */
static int print_and_remove(const char *path)
{
	struct trace_reader *r;
	int ret;

	if (trace_reader_open(&r, path)) {
		unlink(path);
		return -1;
	}
	fflush(stdout);
	ret = report_ftrace(r, stdout);
	trace_reader_close(r);
	unlink(path);
	return ret;
}

int cmd_trace(int argc, char **argv)
{
	char tmp_path[] = "/tmp/earlytrace-XXXXXX";
	static struct machine machine; /* large, and signal handlers point at it */
	static struct tracer tracer;
	struct trace_options opts;
	int status = EXIT_STATUS_ERROR;

	et_clear_error();
	if (cli_parse_trace(argc, argv, &opts)) {
		fprintf(stderr, "earlytrace: %s\n", et_last_error());
		trace_options_free(&opts);
		return EXIT_STATUS_ERROR;
	}
	if (opts.run.help || opts.run.list_cpu_models) {
		fputs(cli_trace_usage, stdout);
		trace_options_free(&opts);
		return 0;
	}
	if (!opts.output) {
		int fd = mkstemp(tmp_path);

		if (fd < 0) {
			fprintf(stderr, "earlytrace: cannot create a temporary trace file: %s\n",
				strerror(errno));
			trace_options_free(&opts);
			return EXIT_STATUS_ERROR;
		}
		close(fd);
		opts.output = tmp_path;
	}
	if (machine_create(&machine, &opts.run)) {
		fprintf(stderr, "earlytrace: %s\n", et_last_error());
		if (opts.output == tmp_path)
			unlink(tmp_path);
		trace_options_free(&opts);
		return EXIT_STATUS_ERROR;
	}
	if (tracer_attach(&tracer, &machine, &opts)) {
		fprintf(stderr, "earlytrace: %s\n", et_last_error());
	} else {
		status = machine_run(&machine);
		if (tracer_finish(&tracer)) {
			fprintf(stderr, "earlytrace: %s\n", et_last_error());
			if (status == 0)
				status = EXIT_STATUS_ERROR;
		}
	}
	tracer_free(&tracer);
	machine_destroy(&machine);
	if (opts.output == tmp_path && print_and_remove(tmp_path)) {
		fprintf(stderr, "earlytrace: %s\n", et_last_error());
		if (status == 0)
			status = EXIT_STATUS_ERROR;
	}
	trace_options_free(&opts);
	return status;
}
