/* SPDX-License-Identifier: MIT */
#include "vmm/cmd/cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/kvm/vm.h"
#include "vmm/util/error.h"

const char cli_usage[] =
	"Usage: earlytrace COMMAND [OPTIONS]\n"
	"\n"
	"Boots a guest kernel under KVM and traces it from its first instruction.\n"
	"\n"
	"Commands:\n"
	"  run        boot a kernel and show its console\n"
	"  trace      boot a kernel and record its calls into a trace file\n"
	"  sites      list a kernel's traceable function sites\n"
	"  report     convert a trace file: ftrace text, Chrome JSON, summary\n"
	"  check      check a trace file against expectations, report in KTAP\n"
	"  domain-xml print a libvirt domain definition for the given options\n"
	"  help       show this help (also --help, -h)\n"
	"  version    show the version (also --version)\n"
	"\n"
	"Run 'earlytrace COMMAND --help' for a command's options.\n";

const char cli_run_usage[] =
	"Usage: earlytrace run --kernel FILE [OPTIONS]\n"
	"       earlytrace run [--connect URI] --domain NAME [OPTIONS]\n"
	"\n"
	"Boots FILE (a bzImage, or a vmlinux ELF); the guest's COM1 is this\n"
	"terminal. Ctrl-A x quits; Ctrl-A Ctrl-A sends Ctrl-A.\n"
	"\n"
	"  -k, --kernel FILE      kernel to boot (required)\n"
	"  -i, --initrd FILE      initial ramdisk\n"
	"  -p, --append STR       kernel command line\n"
	"  -m, --mem SIZE         guest RAM, e.g. 64M or 1G; a bare number is MiB\n"
	"                         (default 512M)\n"
	"      --cpus N           vCPUs (default 1), up to what KVM takes; more\n"
	"                         than the host's CPUs take turns (a warning says\n"
	"                         so); the guest starts vCPUs 1..N-1 (INIT/SIPI)\n"
	"      --timeout SECONDS  stop the guest after this long (exit status 124)\n"
	"      --cpu MODEL        CPU model: auto (default), host, nested-pvm;\n"
	"                         'help' lists them\n"
	"      --boot PROTOCOL    auto (default: pvh when the kernel has a PVH note,\n"
	"                         else linux64), pvh, or linux64\n"
	"      --symbols FILE     System.map or ELF with the kernel's symbols, when\n"
	"                         the kernel has none (stripped kernels' kallsyms\n"
	"                         are found without it)\n"
	"      --debug-io         log port and MMIO accesses no device claims\n"
	"      --on-panic ACTION  when the guest kernel panics: exit (default: end\n"
	"                         the run, status 3, once the kernel has printed\n"
	"                         its panic output) or continue (let it reboot or\n"
	"                         wait as its panic= parameter says)\n"
	"      --nmi-at SYMBOL    send the guest an NMI the first time it reaches\n"
	"                         the function SYMBOL (a stock kernel given\n"
	"                         unknown_nmi_panic panics there; with\n"
	"                         ftrace_dump_on_oops it prints its ftrace ring)\n"
	"      --domain NAME      take the kernel, initrd, command line and memory\n"
	"                         from this libvirt domain's direct kernel boot;\n"
	"                         options given here win over the domain's\n"
	"      --connect URI      the libvirt connection for --domain, e.g.\n"
	"                         qemu:///system (default: libvirt's default URI)\n"
	"  -h, --help             show this help\n"
	"\n"
	"A guest reset ends the run, whichever way the kernel resets: the i8042,\n"
	"the ACPI reset register (port 0xcf9, also reboot=p), the BIOS reset\n"
	"vector, or a triple fault on an empty IDT (reboot=t).\n"
	"\n"
	"Exit status: the guest's debug-exit value; 0 on guest reset or power-off;\n"
	"1 on bad input or a VMM failure; 2 when the guest crashed (a report is\n"
	"printed); 3 when the guest kernel panicked; 124 on --timeout; 128+N when\n"
	"stopped by signal N.\n";

int cli_parse_size(const char *text, uint64_t *bytes)
{
	unsigned long long value;
	unsigned shift = 20; /* bare numbers are MiB */
	char *end;

	if (!text || !isdigit((unsigned char)text[0]))
		return et_error("invalid size '%s': expected a number such as 512M or 2G",
				text ? text : "");
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno)
		return et_error("invalid size '%s': number too large", text);
	switch (toupper((unsigned char)*end)) {
	case '\0':
		break;
	case 'B':
		shift = 0;
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return et_error("invalid size '%s': unknown suffix '%s' (use K, M, G or T)", text,
				end);
	}
	if (*end) {
		end++;
		/* Accept "512MiB" and "512MB" as spelled by people. */
		if (shift && (!strcasecmp(end, "iB") || !strcasecmp(end, "B")))
			end += strlen(end);
		if (*end)
			return et_error("invalid size '%s': unexpected '%s'", text, end);
	}
	if (value > (UINT64_MAX >> shift))
		return et_error("invalid size '%s': too large", text);
	*bytes = (uint64_t)value << shift;
	return 0;
}

int cli_parse_cpus(const char *text, unsigned max, unsigned *cpus)
{
	unsigned long value;
	char *end;

	errno = 0;
	value = isdigit((unsigned char)text[0]) ? strtoul(text, &end, 10) : 0;
	if (!value || *end || errno || value > max)
		return et_error("invalid number of vCPUs '%s': expected 1 to %u", text, max);
	*cpus = (unsigned)value;
	return 0;
}

int cli_parse_panic_action(const char *text, enum panic_action *action)
{
	if (!strcmp(text, "exit"))
		*action = PANIC_ACTION_EXIT;
	else if (!strcmp(text, "continue"))
		*action = PANIC_ACTION_CONTINUE;
	else
		return et_error("invalid action '%s': expected exit or continue", text);
	return 0;
}

int cli_parse_seconds(const char *text, double *seconds)
{
	char *end;
	double value;

	errno = 0;
	value = text ? strtod(text, &end) : 0;
	if (!text || end == text || *end || errno || !isfinite(value) || value <= 0 ||
	    value > 1e9)
		return et_error("invalid time '%s': expected a positive number of seconds",
				text ? text : "");
	*seconds = value;
	return 0;
}


static const struct option run_options_table[] = {
	CLI_RUN_LONG_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

int cli_bad_option(const char *cmd, int argc, char **argv, int c)
{
	const char *arg = optind - 1 < argc ? argv[optind - 1] : "?";

	/* getopt's own messages go to stderr unformatted; ours name the option. */
	if (c == ':')
		return et_error("option '%s' needs a value", arg);
	if (optopt && optopt != '?' && optopt < 256)
		return et_error("unknown option '-%c' (try 'earlytrace %s --help')", optopt, cmd);
	return et_error("unknown option '%s' (try 'earlytrace %s --help')", arg, cmd);
}

int cli_trace_file_operand(const char *cmd, int argc, char **argv, const char **path)
{
	if (optind >= argc)
		return et_error("%s: no trace file given (try 'earlytrace %s --help')", cmd, cmd);
	if (optind + 1 < argc)
		return et_error("%s: unexpected argument '%s'", cmd, argv[optind + 1]);
	*path = argv[optind];
	return 0;
}

void cli_run_defaults(struct run_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->mem_size = RUN_DEFAULT_MEM;
	opts->nr_cpus = 1;
	opts->cpu_model = CPU_MODEL_DEFAULT;
}

int cli_run_option(int c, const char *arg, struct run_options *opts)
{
	switch (c) {
	case 'k':
		opts->kernel = arg;
		opts->given |= RUN_GIVEN_KERNEL;
		return 1;
	case 'i':
		opts->initrd = arg;
		opts->given |= RUN_GIVEN_INITRD;
		return 1;
	case 'p':
		opts->append = arg;
		opts->given |= RUN_GIVEN_APPEND;
		return 1;
	case 'm':
		opts->given |= RUN_GIVEN_MEM;
		return cli_parse_size(arg, &opts->mem_size) ? et_error_prefix("--mem") : 1;
	case CLI_OPT_CPUS:
		opts->given |= RUN_GIVEN_CPUS;
		return cli_parse_cpus(arg, VM_MAX_VCPUS, &opts->nr_cpus) ? et_error_prefix("--cpus")
									  : 1;
	case CLI_OPT_CONNECT:
		opts->connect = arg;
		return 1;
	case CLI_OPT_DOMAIN:
		if (!*arg)
			return et_error("--domain: empty domain name");
		opts->domain = arg;
		return 1;
	case CLI_OPT_TIMEOUT:
		return cli_parse_seconds(arg, &opts->timeout_s) ? et_error_prefix("--timeout") : 1;
	case CLI_OPT_CPU:
		if (!strcmp(arg, "help")) {
			opts->list_cpu_models = true;
			return 1;
		}
		if (!cpu_model_find(arg))
			return et_error("--cpu: unknown CPU model '%s' (try --cpu help)", arg);
		opts->cpu_model = arg;
		return 1;
	case CLI_OPT_BOOT:
		return boot_protocol_parse(arg, &opts->boot) ? et_error_prefix("--boot") : 1;
	case CLI_OPT_SYMBOLS:
		opts->symbols = arg;
		return 1;
	case CLI_OPT_DEBUG_IO:
		opts->debug_io = true;
		return 1;
	case CLI_OPT_ON_PANIC:
		return cli_parse_panic_action(arg, &opts->on_panic) ? et_error_prefix("--on-panic")
								    : 1;
	case CLI_OPT_NMI_AT:
		if (!*arg)
			return et_error("--nmi-at: empty symbol name");
		opts->nmi_at = arg;
		return 1;
	case 'h':
		opts->help = true;
		return 1;
	default:
		return 0;
	}
}

int cli_parse_run(int argc, char **argv, struct run_options *opts)
{
	int c;

	cli_run_defaults(opts);
	optind = 0; /* full re-initialization, so parsing can be repeated */
	opterr = 0;
	while ((c = getopt_long(argc, argv, CLI_RUN_SHORT_OPTIONS, run_options_table, NULL)) != -1) {
		int handled = cli_run_option(c, optarg, opts);

		if (handled < 0)
			return -1;
		if (!handled)
			return cli_bad_option("run", argc, argv, c);
	}
	if (optind < argc)
		return et_error("unexpected argument '%s' (try 'earlytrace run --help')",
				argv[optind]);
	return cli_run_check("run", opts);
}

int cli_run_check(const char *cmd, const struct run_options *opts)
{
	if (opts->help || opts->list_cpu_models)
		return 0;
	if (opts->connect && !opts->domain)
		return et_error("%s: --connect URI goes with --domain NAME", cmd);
	if (!opts->kernel && !opts->domain)
		return et_error("%s: --kernel FILE is required (or --domain NAME)", cmd);
	return 0;
}
