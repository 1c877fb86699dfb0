/* SPDX-License-Identifier: MIT */
#ifndef VMM_CMD_TRACE_H
#define VMM_CMD_TRACE_H

/* `earlytrace trace`: boots a kernel with tracing; returns the exit status.
 * Its options are parsed in trace_options.c. */
int cmd_trace(int argc, char **argv);

#endif /* VMM_CMD_TRACE_H */
