/* SPDX-License-Identifier: MIT */
/*
 * `earlytrace domain-xml`: prints a libvirt domain definition (QEMU/KVM,
 * direct kernel boot) for the machine options given, as `run` would boot
 * them, so a traced setup can be moved into libvirt.
 */
#include "vmm/cmd/domain_xml.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/libvirt/domain_name.h"
#include "vmm/libvirt/plugin.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/run/end.h"
#include "vmm/util/error.h"
#include "vmm/util/output_file.h"

const char cli_domain_xml_usage[] =
	"Usage: earlytrace domain-xml --kernel FILE [OPTIONS]\n"
	"       earlytrace domain-xml [--connect URI] --domain NAME [OPTIONS]\n"
	"\n"
	"Prints a libvirt domain definition (QEMU/KVM, direct kernel boot) for the\n"
	"machine the options describe, as 'earlytrace run' would boot it: memory,\n"
	"one vCPU, kernel, initrd and command line (absolute paths), the host's\n"
	"CPU, COM1 as the console. Load it with 'virsh define'.\n"
	"\n"
	"      --name NAME        the domain's name (default: the --domain's, else\n"
	"                         earlytrace-KERNEL)\n"
	"  -o, --output FILE      write there instead of standard output\n"
	"\n"
	"Machine options, as for 'earlytrace run': -k/--kernel, -i/--initrd,\n"
	"-p/--append, -m/--mem, --cpu, --boot, --connect, --domain (explicit\n"
	"options win over the domain's). --timeout, --symbols, --debug-io and\n"
	"--on-panic have no place in a definition: a line on stderr says so.\n"
	"\n"
	"Exit status: 0, or 1 with a one-line error (a kernel that 'earlytrace run'\n"
	"would refuse, a missing file, a domain earlytrace cannot run).\n";

enum {
	OPT_NAME = CLI_OPT_FIRST_FREE,
};

static const struct option domain_xml_options_table[] = {
	CLI_RUN_LONG_OPTIONS,
	{ "name", required_argument, NULL, OPT_NAME },
	{ "output", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

int cli_parse_domain_xml(int argc, char **argv, struct domain_xml_options *opts)
{
	int c;

	memset(opts, 0, sizeof(*opts));
	cli_run_defaults(&opts->run);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, CLI_RUN_SHORT_OPTIONS "o:", domain_xml_options_table,
				NULL)) != -1) {
		int ret = cli_run_option(c, optarg, &opts->run);

		if (ret < 0)
			return -1;
		if (ret > 0)
			continue;
		if (c == OPT_NAME) {
			if (domain_xml_check_name(optarg))
				return -1;
			opts->name = optarg;
		} else if (c == 'o') {
			opts->output = optarg;
		} else {
			return cli_bad_option("domain-xml", argc, argv, c);
		}
	}
	if (optind < argc)
		return et_error("unexpected argument '%s' (try 'earlytrace domain-xml --help')",
				argv[optind]);
	return cli_run_check("domain-xml", &opts->run);
}

/* The kernel must be one `run` would boot: the same checks, no VM. */
static int check_kernel(const struct run_options *o)
{
	struct kernel_image img;
	enum boot_protocol protocol;
	int ret;

	if (kernel_image_open(&img, o->kernel))
		return -1;
	ret = boot_choose_protocol(&img, o->boot, &protocol);
	kernel_image_close(&img);
	return ret;
}

static int write_out(const char *xml, const struct domain_xml_options *o)
{
	const char *inputs[] = { o->run.kernel, o->run.initrd, o->run.symbols };
	struct output_file of;

	if (!o->output) {
		fputs(xml, stdout);
		if (fflush(stdout) || ferror(stdout))
			return et_error_errno("cannot write standard output");
		return 0;
	}
	if (output_refuse_inputs("-o", o->output, inputs, 3) || output_file_open(&of, o->output))
		return -1;
	fputs(xml, of.f);
	return output_file_commit(&of);
}

int cmd_domain_xml(int argc, char **argv)
{
	struct domain_xml_options opts;
	struct libvirt_domain domain;
	struct libvirt_notes notes = { NULL, 0 };
	char name[256];
	char *xml = NULL;
	int status = EXIT_STATUS_ERROR;

	et_clear_error();
	memset(&domain, 0, sizeof(domain));
	if (cli_parse_domain_xml(argc, argv, &opts))
		goto out;
	if (opts.run.help || opts.run.list_cpu_models) {
		fputs(cli_domain_xml_usage, stdout);
		return 0;
	}
	if (libvirt_plugin_domain_load(&domain, &opts.run) || check_kernel(&opts.run))
		goto out;
	if (!opts.name)
		opts.name = domain.name ? domain.name
					: domain_xml_default_name(opts.run.kernel, name, sizeof(name));
	xml = libvirt_plugin_domain_xml_write(&opts.run, opts.name, &notes);
	for (size_t i = 0; i < notes.nr; i++)
		et_warn("%s", notes.lines[i]);
	if (!xml || write_out(xml, &opts))
		goto out;
	status = 0;
out:
	if (status)
		et_print_error();
	free(xml);
	libvirt_plugin_notes_free(&notes);
	libvirt_plugin_domain_free(&domain);
	return status;
}
