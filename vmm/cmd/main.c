/* SPDX-License-Identifier: MIT */
/* earlytrace: dispatches to one command per verb; the work is elsewhere. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "earlytrace/abi.h"
#include "vmm/cmd/check.h"
#include "vmm/cmd/cli.h"
#include "vmm/cmd/domain_xml.h"
#include "vmm/cmd/report.h"
#include "vmm/cmd/run.h"
#include "vmm/cmd/sites.h"
#include "vmm/cmd/trace.h"
#include "vmm/run/end.h"
#include "vmm/util/error.h"
#include "vmm/util/version.h"

static int print_version(void)
{
	printf("earlytrace %s (guest ABI %d)\n", EARLYTRACE_VERSION, ET_ABI_VERSION);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	/* A write to a closed pipe or past the file size limit fails with
	 * EPIPE or EFBIG, which every writer reports, instead of killing the
	 * process without a word (a run catches SIGPIPE: signals.c). */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	if (!cmd) {
		fputs(cli_usage, stderr);
		return EXIT_STATUS_ERROR;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "trace"))
		return cmd_trace(argc - 1, argv + 1);
	if (!strcmp(cmd, "sites"))
		return cmd_sites(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(cmd, "domain-xml"))
		return cmd_domain_xml(argc - 1, argv + 1);
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(cli_usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
		return print_version();
	et_error("unknown command '%s' (try 'earlytrace --help')", cmd);
	et_print_error();
	return EXIT_STATUS_ERROR;
}
