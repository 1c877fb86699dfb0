/* SPDX-License-Identifier: MIT */
/*
 * `earlytrace trace`'s options: argv turned into struct trace_options
 * (vmm/trace/tracer.h), the machine's options through cli.h, and nothing
 * else, as cli.h does for `run`.
 */
#ifndef VMM_CMD_TRACE_OPTIONS_H
#define VMM_CMD_TRACE_OPTIONS_H

#include "vmm/trace/tracer.h"

#define TRACE_DEFAULT_BUF_SIZE (64ull << 20)
#define TRACE_DEFAULT_HANDOFF "ftrace_init"
#define TRACE_DEFAULT_TAIL 50 /* events the flight recorder prints */
/* More is no flight-recorder report (the trace file has every event), and
 * each one the recorder keeps costs ~100 bytes of VMM memory. */
#define TRACE_MAX_TAIL 100000
#define TRACE_DEFAULT_KERNEL_BUF_SIZE (4ull << 20) /* --follow: the kernel's ring per CPU */
#define TRACE_DEFAULT_FOLLOW_PERIOD 0.1		  /* --follow: seconds between reads */

extern const char cli_trace_usage[];

/* Parses `trace`'s options (argv[0] is "trace"); with --follow, also sets
 * the kernel parameters its tracer needs (run.extra_params). Free with
 * trace_options_free. 0, or -1 with an error. */
int cli_parse_trace(int argc, char **argv, struct trace_options *opts);
void trace_options_free(struct trace_options *opts);

#endif /* VMM_CMD_TRACE_OPTIONS_H */
