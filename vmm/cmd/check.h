/* SPDX-License-Identifier: MIT */
#ifndef VMM_CMD_CHECK_H
#define VMM_CMD_CHECK_H

#include <stdbool.h>
#include <stdio.h>

#include "vmm/check/expect.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exit status when every expectation was read and evaluated but at
 * least one did not pass (a failed or undecidable assertion). */
#define EXIT_STATUS_EXPECT_FAILED 5

extern const char cli_check_usage[];

struct check_options {
	const char *trace_file;
	const char *expect; /* --expect FILE */
	const char *output; /* --output FILE, or NULL: standard output */
	bool help;
};

/* Parses `check`'s options (argv[0] is "check"). 0, or -1 with an error. */
int cli_parse_check(int argc, char **argv, struct check_options *opts);

/* Evaluates l over the trace file at trace_path and writes the KTAP report
 * to out, naming the trace `label` (NULL: its path). Returns 0 when every
 * assertion passed, EXIT_STATUS_EXPECT_FAILED when one did not, or
 * EXIT_STATUS_ERROR with et_last_error() set when the trace cannot be read
 * (nothing is written then) or out fails. */
int check_trace(const char *trace_path, const char *label, const struct expect_list *l,
		FILE *out);

/* `earlytrace check`: returns the exit status. */
int cmd_check(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* VMM_CMD_CHECK_H */
