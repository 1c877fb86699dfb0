/* SPDX-License-Identifier: MIT */
/* `earlytrace trace`: boot a kernel and record its calls from the first
 * instruction into a trace file. */
#include "vmm/cmd/trace.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cmd/check.h"
#include "vmm/cmd/report.h"
#include "vmm/cmd/trace_options.h"
#include "vmm/libvirt/plugin.h"
#include "vmm/report/report.h"
#include "vmm/run/end.h"
#include "vmm/trace/progress.h"
#include "vmm/trace/tracer.h"
#include "vmm/util/error.h"
#include "vmm/util/output_file.h"

/* Without -o: a temporary file, printed as ftrace text at the end. It is
 * opened, then removed at once (the reader keeps it open), so nothing that
 * ends the printing leaves it behind. NULL with an error if it cannot be
 * read. */
static struct trace_reader *open_and_remove(const char *path)
{
	struct trace_reader *r;

	if (trace_reader_open(&r, path))
		r = NULL;
	unlink(path);
	return r;
}

static int print_trace(struct trace_reader *r)
{
	int ret;

	fflush(stdout);
	ret = report_ftrace(r, stdout);
	trace_reader_close(r);
	return ret;
}

/* --domain and --expect: what cmd_trace() reads before the guest starts. */
static struct libvirt_domain trace_domain;
static struct expect_list trace_expect;

static void warn_untraceable(void *ctx, const struct expect_list *l, const struct expect *e,
			     const char *func, const char *why)
{
	(void)ctx;
	et_warn("%s:%u: warning: '%s' cannot be in this trace: %s", l->name, e->line, func, why);
}

/* Reads the domain and the expectations, so a typo in either is reported
 * before a long boot rather than after it. */
static int trace_prepare(struct trace_options *o)
{
	if (libvirt_plugin_domain_load(&trace_domain, &o->run))
		return -1;
	const char *inputs[] = { o->run.kernel, o->run.initrd, o->run.symbols, o->expect };
	if (output_refuse_inputs("--output", o->output, inputs, 4))
		return -1;
	if (!o->expect)
		return 0;
	if (expect_parse_file(&trace_expect, o->expect))
		return -1;
	return expect_check_filters(&trace_expect, o->filters, o->nr_filters, o->notrace,
				    o->nr_notrace, warn_untraceable, NULL);
}

static void trace_cleanup(struct trace_options *o)
{
	trace_options_free(o);
	libvirt_plugin_domain_free(&trace_domain);
	expect_list_free(&trace_expect);
}

/* --expect: the KTAP report on stdout, after the guest's console. The
 * run's own status wins when it is not 0 (docs/ci-howto.md). */
static int check_after_run(int status, const char *path, bool temporary)
{
	int check;

	fflush(stdout);
	check = check_trace(path, temporary ? "this run's trace" : NULL, &trace_expect, stdout);
	if (check == EXIT_STATUS_ERROR) {
		et_error_prefix("--expect");
		et_print_error();
	}
	return status ? status : check;
}

/* A signal that came while the trace file was finished or printed: the
 * work went on (it is bounded by the file), the status says so. */
static int signal_after_run(int status, int sig)
{
	if (!sig)
		return status;
	et_warn("stopped by signal %d (%s) after the run; the trace file was finished", sig,
		machine_signal_describe(sig));
	return status >= EXIT_STATUS_SIGNAL_BASE ? status : EXIT_STATUS_SIGNAL_BASE + sig;
}

/* Where the trace went, for the summary's last words: a temporary file is
 * gone once the command ends, so it is not named. */
static const char *trace_destination(const struct trace_options *o, bool temporary,
				     const char *convert_to, char *buf, size_t len)
{
	if (convert_to)
		snprintf(buf, len, "written to %s (converted from the run's trace by its extension)",
			 convert_to);
	else if (!temporary)
		snprintf(buf, len, "written to %s", o->output);
	else if (o->expect)
		snprintf(buf, len, "not kept (no -o): checked against %s below", o->expect);
	else
		snprintf(buf, len, "not kept (no -o): printed below as ftrace text");
	return buf;
}

static void progress_erase(void *ctx)
{
	progress_before_output(ctx);
}

int cmd_trace(int argc, char **argv)
{
	char tmp_path[PATH_MAX];
	static struct machine machine; /* large, and signal handlers point at it */
	static struct tracer tracer;
	struct trace_options opts;
	int status = EXIT_STATUS_ERROR;
	bool ran = false, finished, print_failed = false;
	struct trace_reader *printed = NULL;
	/* -o FILE.dat (.json, .csv): the run's trace goes to a temporary file,
	 * converted into FILE at the end, as `report -o FILE` would. */
	const char *convert_to = NULL;
	enum report_format convert_format;

	et_clear_error();
	if (cli_parse_trace(argc, argv, &opts)) {
		et_print_error();
		trace_options_free(&opts);
		return EXIT_STATUS_ERROR;
	}
	if (opts.run.help || opts.run.list_cpu_models) {
		fputs(cli_trace_usage, stdout);
		trace_options_free(&opts);
		return 0;
	}
	if (trace_prepare(&opts)) {
		et_print_error();
		trace_cleanup(&opts);
		return EXIT_STATUS_ERROR;
	}
	/* From here a signal ends the run cleanly, never the process: the
	 * file gets its END, a temporary one is removed. */
	machine_signals_catch();
	if (opts.output && report_format_of_path(opts.output, &convert_format)) {
		convert_to = opts.output;
		opts.output = NULL;
	}
	if (!opts.output) {
		const char *dir = getenv("TMPDIR");
		int fd;

		snprintf(tmp_path, sizeof(tmp_path), "%s/earlytrace-XXXXXX",
			 dir && dir[0] && strlen(dir) < sizeof(tmp_path) - 32 ? dir : "/tmp");
		fd = mkstemp(tmp_path);

		if (fd < 0) {
			et_error_errno("cannot create a temporary trace file");
			et_print_error();
			machine_signals_release();
			trace_cleanup(&opts);
			return EXIT_STATUS_ERROR;
		}
		close(fd);
		opts.output = tmp_path;
	}
	if (machine_create(&machine, &opts.run)) {
		et_print_error();
		if (opts.output == tmp_path)
			unlink(tmp_path);
		machine_signals_release();
		trace_cleanup(&opts);
		return EXIT_STATUS_ERROR;
	}
	if (tracer_attach(&tracer, &machine, &opts)) {
		et_print_error();
	} else {
		static struct progress progress;
		char where[PATH_MAX + 64];

		/* A line on a terminal only, while the guest runs. */
		if (progress_start(&progress, STDERR_FILENO, 0.5, tracer_progress_sample, &tracer))
			et_print_error(); /* the run goes on without it */
		machine.uart.before_tx = progress_erase;
		machine.uart.before_tx_ctx = &progress;
		status = machine_run(&machine);
		progress_stop(&progress);
		machine.uart.before_tx = NULL;
		ran = true;
		finished = tracer_finish(&tracer) == 0;
		tracer_print_summary(&tracer, stderr,
				     trace_destination(&opts, opts.output == tmp_path, convert_to,
						       where, sizeof(where)));
		if (!finished) {
			et_print_error();
			if (status == 0)
				status = EXIT_STATUS_ERROR;
		}
	}
	tracer_free(&tracer);
	machine_destroy(&machine);
	if (ran && opts.expect)
		status = check_after_run(status, opts.output, opts.output == tmp_path);
	if (convert_to) {
		if (ran && report_to_file(tmp_path, convert_format, convert_to)) {
			et_print_error();
			if (status == 0)
				status = EXIT_STATUS_ERROR;
		}
		unlink(tmp_path);
	} else if (opts.output == tmp_path &&
		   (opts.expect || status == EXIT_STATUS_SIGNAL_BASE + SIGPIPE)) {
		/* The KTAP report stands in for the printed trace; after a
		 * SIGPIPE nobody reads standard output any more. */
		unlink(tmp_path);
	} else if (opts.output == tmp_path) {
		printed = open_and_remove(tmp_path);
		print_failed = !printed;
	}
	/* The file is finished and no temporary one is left: from here the
	 * signals act as usual (Ctrl-C stops a long printout). */
	status = signal_after_run(status, machine_signals_release());
	if (printed)
		print_failed = print_trace(printed) != 0;
	if (print_failed) {
		et_print_error();
		if (status == 0)
			status = EXIT_STATUS_ERROR;
	}
	trace_cleanup(&opts);
	return status;
}
