/* SPDX-License-Identifier: MIT */
/* `earlytrace trace`'s options: the usage text, and argv turned into
 * struct trace_options (the machine's options through cli.c), with
 * --follow's kernel parameters. Parsing only, like cli.c: the run itself
 * is trace.c's. */
#include "vmm/cmd/trace_options.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/cmd/cli.h"
#include "vmm/util/error.h"

const char cli_trace_usage[] =
	"Usage: earlytrace trace --kernel FILE [OPTIONS]\n"
	"       earlytrace trace [--connect URI] --domain NAME [OPTIONS]\n"
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
	"      --graph            record returns too (function graph; breakpoint\n"
	"                         mode): report --format graph or folded\n"
	"      --no-exits         record calls only, not the VM exits (port I/O,\n"
	"                         MMIO, MSRs, hypercalls, HLT, triple fault)\n"
	"      --trace-msr LIST   also see every rdmsr/wrmsr of these MSRs\n"
	"                         (comma-separated numbers or names, e.g.\n"
	"                         efer,pat,0x1a0; at most 16)\n"
	"      --tail N           the flight recorder: events printed when the\n"
	"                         guest crashes, panics or hangs (default 50,\n"
	"                         at most 100000)\n"
	"      --hang-timeout S   end the run as hung after S seconds without a\n"
	"                         new event, with a flight-recorder report\n"
	"  -o, --output FILE      trace file; without one, the trace is printed\n"
	"                         in ftrace's text format when the run ends;\n"
	"                         a file another run is writing is refused;\n"
	"                         FILE.dat, .json or .csv: that report instead\n"
	"                         (trace-dat, json, csv), converted at the end\n"
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
	"      --follow           stock kernels: go on into the kernel's own ftrace:\n"
	"                         earlytrace adds ftrace=function (function_graph\n"
	"                         with --graph), ftrace_filter=/ftrace_notrace= from\n"
	"                         -f/-n, trace_buf_size= and trace_clock=x86-tsc to\n"
	"                         the kernel's command line, records until ftrace\n"
	"                         patches code, writes the calls recorded so far\n"
	"                         into the kernel's own ring (so its readers,\n"
	"                         tracefs and ftrace_dump_on_oops, show them too),\n"
	"                         then reads that ring from guest memory into the\n"
	"                         same trace\n"
	"      --no-fill          --follow without writing the early calls into\n"
	"                         the kernel's ring\n"
	"      --kernel-buf-size SIZE  --follow: the kernel's ring per CPU\n"
	"                         (default 4M: about 148,000 function calls, the\n"
	"                         early calls of a filtered boot with room to spare;\n"
	"                         when they do not fit, the oldest are left out and\n"
	"                         counted)\n"
	"      --follow-period S  read the guest's rings (--follow's kernel ring,\n"
	"                         guestlib's after its handoff) every S seconds\n"
	"                         (default 0.1) and at every end of the run\n"
	"      --expect FILE      when the run ends, check the trace against FILE as\n"
	"                         'earlytrace check' does and print the KTAP report\n"
	"                         (exit status 5 when an assertion fails)\n"
	"\n"
	"Machine options, as for 'earlytrace run': -k/--kernel, -i/--initrd,\n"
	"-p/--append, -m/--mem, --cpus, --timeout, --cpu, --boot, --symbols,\n"
	"--debug-io, --on-panic, --nmi-at, --connect, --domain. With --cpus N > 1\n"
	"each call is recorded with its vCPU; trampolines then need RDTSCP in\n"
	"the guest and no --oneshot (else auto uses breakpoints).\n"
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
	OPT_GRAPH,
	OPT_NO_EXITS,
	OPT_TRACE_MSR,
	OPT_TAIL,
	OPT_HANG_TIMEOUT,
	OPT_EXPECT,
	OPT_FOLLOW,
	OPT_KERNEL_BUF_SIZE,
	OPT_FOLLOW_PERIOD,
	OPT_NO_FILL,
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
	{ "graph", no_argument, NULL, OPT_GRAPH },
	{ "no-exits", no_argument, NULL, OPT_NO_EXITS },
	{ "trace-msr", required_argument, NULL, OPT_TRACE_MSR },
	{ "tail", required_argument, NULL, OPT_TAIL },
	{ "hang-timeout", required_argument, NULL, OPT_HANG_TIMEOUT },
	{ "expect", required_argument, NULL, OPT_EXPECT },
	{ "follow", no_argument, NULL, OPT_FOLLOW },
	{ "kernel-buf-size", required_argument, NULL, OPT_KERNEL_BUF_SIZE },
	{ "follow-period", required_argument, NULL, OPT_FOLLOW_PERIOD },
	{ "no-fill", no_argument, NULL, OPT_NO_FILL },
	{ NULL, 0, NULL, 0 },
};

void trace_options_free(struct trace_options *opts)
{
	free(opts->filters);
	free(opts->notrace);
	free(opts->run.extra_params);
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

/* --trace-msr efer,0x1a0,...: names or numbers, repeatable. */
static int parse_msr_list(const char *arg, struct trace_options *o)
{
	char copy[512], *save = NULL;
	const size_t max = sizeof(o->trace_msrs) / sizeof(o->trace_msrs[0]);

	if (strlen(arg) >= sizeof(copy))
		return et_error("--trace-msr: list too long");
	strcpy(copy, arg);
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		uint32_t index;

		if (arch_msr_parse(w, &index))
			return et_error("--trace-msr: '%s' is not an MSR number or one of: %s", w,
					arch_msr_names_list());
		if (o->nr_trace_msrs == max)
			return et_error("--trace-msr: at most %zu MSRs", max);
		o->trace_msrs[o->nr_trace_msrs++] = index;
	}
	if (!o->nr_trace_msrs)
		return et_error("--trace-msr: no MSR given");
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
	case OPT_EXPECT:
		if (o->expect)
			return et_error("--expect given twice (one expectations file per run)");
		o->expect = arg;
		return 0;
	case OPT_GRAPH:
		o->graph = true;
		return 0;
	case OPT_NO_EXITS:
		o->no_exits = true;
		return 0;
	case OPT_TRACE_MSR:
		return parse_msr_list(arg, o);
	case OPT_TAIL:
		if (parse_count("--tail", arg, &o->tail))
			return -1;
		if (o->tail > TRACE_MAX_TAIL)
			return et_error("--tail: %s is more than %d events (the trace file has them "
					"all)",
					arg, TRACE_MAX_TAIL);
		return 0;
	case OPT_FOLLOW:
		o->follow = true;
		return 0;
	case OPT_NO_FILL:
		o->no_fill = true;
		return 0;
	case OPT_KERNEL_BUF_SIZE:
		if (cli_parse_size(arg, &o->kernel_buf_size))
			return et_error_prefix("--kernel-buf-size");
		if (o->kernel_buf_size < 4096)
			return et_error("--kernel-buf-size: %s is less than a page", arg);
		return 0;
	case OPT_FOLLOW_PERIOD:
		if (cli_parse_seconds(arg, &o->follow_period_s))
			return et_error_prefix("--follow-period");
		if (o->follow_period_s < 0.001)
			return et_error("--follow-period: %s is under a millisecond", arg);
		return 0;
	case OPT_HANG_TIMEOUT:
		return cli_parse_seconds(arg, &o->hang_timeout_s) ? et_error_prefix("--hang-timeout")
								  : 0;
	default:
		return 1; /* not a trace option */
	}
}

/* "a,b,c" from -f or -n globs, as ftrace_filter=/ftrace_notrace= read
 * them (the same glob language: vmm/sites/glob.h). */
static int join_globs(const char *option, const char **globs, size_t n, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *g = globs[i];

		/* ftrace splits the list at commas, and reads '!' and ':' as
		 * commands of its own. */
		if (strpbrk(g, ", \t\n") || g[0] == '!' || strchr(g, ':'))
			return et_error("--follow: %s '%s' cannot be passed to the kernel's ftrace "
					"(no commas, spaces, leading '!' or ':')",
					option, g);
		if (used + strlen(g) + 2 > len)
			return et_error("--follow: the %s list is too long for the kernel command "
					"line",
					option);
		used += (size_t)snprintf(out + used, len - used, "%s%s", i ? "," : "", g);
	}
	return 0;
}

/* --follow: what the kernel's own tracer needs on its command line. The
 * user's --append must not set any of it: the trace would lie. */
static int follow_params(struct trace_options *o)
{
	static const char *const ours[] = { "ftrace",	      "ftrace_filter",	"ftrace_notrace",
					    "trace_buf_size", "trace_clock",	"ftrace_graph_filter" };
	char filter[1024], notrace[1024], *p;
	size_t len;

	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (o->run.append && cmdline_has_param(o->run.append, ours[i]))
			return et_error("--follow sets the kernel's %s= itself (from -f, -n, "
					"--graph, --kernel-buf-size): remove it from --append",
					ours[i]);
	if (join_globs("-f", o->filters, o->nr_filters, filter, sizeof(filter)) ||
	    join_globs("-n", o->notrace, o->nr_notrace, notrace, sizeof(notrace)))
		return -1;
	len = strlen(filter) + strlen(notrace) + 160;
	p = malloc(len);
	if (!p)
		return et_error("out of memory");
	snprintf(p, len, "ftrace=%s%s%s%s%s trace_buf_size=%" PRIu64 " trace_clock=x86-tsc",
		 o->graph ? "function_graph" : "function", filter[0] ? " ftrace_filter=" : "",
		 filter, notrace[0] ? " ftrace_notrace=" : "", notrace, o->kernel_buf_size);
	o->run.extra_params = p;
	o->run.extra_params_why = "--follow: the kernel's own tracer, on earlytrace's clock";
	return 0;
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
	o->tail = TRACE_DEFAULT_TAIL;
	o->kernel_buf_size = TRACE_DEFAULT_KERNEL_BUF_SIZE;
	o->follow_period_s = TRACE_DEFAULT_FOLLOW_PERIOD;
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
	/* The function graph redirects returns at int3 exits; trampolines
	 * have no way back yet. */
	if (o->graph && o->mode == TRACE_MODE_TRAMPOLINE)
		return et_error("--graph needs breakpoint mode (--mode int3 or auto)");
	if (o->graph)
		o->mode = TRACE_MODE_INT3;
	if (cli_run_check("trace", &o->run))
		return -1;
	if (o->no_fill && !o->follow)
		return et_error("--no-fill: only --follow writes into the kernel's ring");
	return o->follow ? follow_params(o) : 0;
}
