/* SPDX-License-Identifier: MIT */
/* `earlytrace run`: boot a kernel and show its console. */
#include "vmm/cmd/run.h"

#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/cmd/cli.h"
#include "vmm/libvirt/plugin.h"
#include "vmm/machine/machine.h"
#include "vmm/run/end.h"
#include "vmm/util/error.h"

static void list_cpu_models(void)
{
	const struct cpu_model *model;

	for (unsigned i = 0; (model = cpu_model_at(i)) != NULL; i++) {
		printf("%-12s %s%s\n", model->name, model->description,
		       model == cpu_model_auto() ? " (auto picks it on this host)" : "");
		for (unsigned j = 0; j < model->nr_hidden; j++)
			printf("             hides %s: %s\n", model->hidden[j].name,
			       model->hidden[j].reason);
		if (model->linux_params)
			printf("             adds '%s' for Linux guests: %s\n", model->linux_params,
			       model->linux_params_reason);
	}
}

int cmd_run(int argc, char **argv)
{
	static struct machine machine; /* large, and signal handlers point at it */
	static struct libvirt_domain domain; /* --domain: opts point into it */
	struct run_options opts;
	int status;

	et_clear_error();
	if (cli_parse_run(argc, argv, &opts)) {
		et_print_error();
		return EXIT_STATUS_ERROR;
	}
	if (opts.help) {
		fputs(cli_run_usage, stdout);
		return 0;
	}
	if (opts.list_cpu_models) {
		list_cpu_models();
		return 0;
	}
	if (libvirt_plugin_domain_load(&domain, &opts) || machine_create(&machine, &opts) ||
	    machine_release_image(&machine)) {
		et_print_error();
		libvirt_plugin_domain_free(&domain);
		return EXIT_STATUS_ERROR;
	}
	status = machine_run(&machine);
	machine_destroy(&machine);
	libvirt_plugin_domain_free(&domain);
	return status;
}
