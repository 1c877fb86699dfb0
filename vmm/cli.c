/* SPDX-License-Identifier: MIT */
#include "vmm/cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/cpu_model.h"
#include "vmm/error.h"

const char cli_usage[] =
	"Usage: earlytrace COMMAND [OPTIONS]\n"
	"\n"
	"Boots a guest kernel under KVM and traces it from its first instruction.\n"
	"\n"
	"Commands:\n"
	"  run        boot a kernel and show its console\n"
	"  sites      list a kernel's traceable function sites\n"
	"  help       show this help (also --help, -h)\n"
	"  version    show the version (also --version)\n"
	"\n"
	"Run 'earlytrace COMMAND --help' for a command's options.\n";

const char cli_run_usage[] =
	"Usage: earlytrace run --kernel FILE [OPTIONS]\n"
	"\n"
	"Boots FILE (a bzImage, or a vmlinux ELF) on one vCPU; the guest's COM1 is\n"
	"this terminal. Ctrl-A x quits; Ctrl-A Ctrl-A sends Ctrl-A.\n"
	"\n"
	"  -k, --kernel FILE      kernel to boot (required)\n"
	"  -i, --initrd FILE      initial ramdisk\n"
	"  -p, --append STR       kernel command line\n"
	"  -m, --mem SIZE         guest RAM, e.g. 64M or 1G; a bare number is MiB\n"
	"                         (default 512M)\n"
	"      --timeout SECONDS  stop the guest after this long (exit status 124)\n"
	"      --cpu MODEL        CPU model: auto (default), host, nested-pvm;\n"
	"                         'help' lists them\n"
	"      --boot PROTOCOL    auto (default: pvh when the kernel has a PVH note,\n"
	"                         else linux64), pvh, or linux64\n"
	"      --symbols FILE     System.map or ELF with the kernel's symbols, when\n"
	"                         the kernel has none (stripped kernels' kallsyms\n"
	"                         are found without it)\n"
	"      --debug-io         log port and MMIO accesses no device claims\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: the guest's debug-exit value; 0 on guest reset; 1 on bad\n"
	"input or a VMM failure; 2 when the guest crashed (a report is printed);\n"
	"3 when the guest kernel panicked; 124 on --timeout; 128+N when stopped\n"
	"by signal N.\n";

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

enum {
	OPT_TIMEOUT = 256,
	OPT_CPU,
	OPT_BOOT,
	OPT_SYMBOLS,
	OPT_DEBUG_IO,
};

static const struct option run_options_table[] = {
	{ "kernel", required_argument, NULL, 'k' },
	{ "initrd", required_argument, NULL, 'i' },
	{ "append", required_argument, NULL, 'p' },
	{ "mem", required_argument, NULL, 'm' },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "boot", required_argument, NULL, OPT_BOOT },
	{ "symbols", required_argument, NULL, OPT_SYMBOLS },
	{ "debug-io", no_argument, NULL, OPT_DEBUG_IO },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* getopt's own messages go to stderr unformatted; ours name the option. */
static int bad_option(int argc, char **argv, int c)
{
	const char *arg = optind - 1 < argc ? argv[optind - 1] : "?";

	if (c == ':')
		return et_error("option '%s' needs a value", arg);
	if (optopt && optopt != '?' && optopt < 256)
		return et_error("unknown option '-%c' (try 'earlytrace run --help')", optopt);
	return et_error("unknown option '%s' (try 'earlytrace run --help')", arg);
}

int cli_parse_run(int argc, char **argv, struct run_options *opts)
{
	int c;

	memset(opts, 0, sizeof(*opts));
	opts->mem_size = CLI_DEFAULT_MEM;
	opts->cpu_model = CPU_MODEL_DEFAULT;

	optind = 0; /* full re-initialization, so parsing can be repeated */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":k:i:p:m:h", run_options_table, NULL)) != -1) {
		switch (c) {
		case 'k':
			opts->kernel = optarg;
			break;
		case 'i':
			opts->initrd = optarg;
			break;
		case 'p':
			opts->append = optarg;
			break;
		case 'm':
			if (cli_parse_size(optarg, &opts->mem_size))
				return et_error_prefix("--mem");
			break;
		case OPT_TIMEOUT:
			if (cli_parse_seconds(optarg, &opts->timeout_s))
				return et_error_prefix("--timeout");
			break;
		case OPT_CPU:
			if (!strcmp(optarg, "help")) {
				opts->list_cpu_models = true;
				break;
			}
			if (!cpu_model_find(optarg))
				return et_error("--cpu: unknown CPU model '%s' (try --cpu help)",
						optarg);
			opts->cpu_model = optarg;
			break;
		case OPT_BOOT:
			if (boot_protocol_parse(optarg, &opts->boot))
				return et_error_prefix("--boot");
			break;
		case OPT_SYMBOLS:
			opts->symbols = optarg;
			break;
		case OPT_DEBUG_IO:
			opts->debug_io = true;
			break;
		case 'h':
			opts->help = true;
			break;
		default:
			return bad_option(argc, argv, c);
		}
	}
	if (optind < argc)
		return et_error("unexpected argument '%s' (try 'earlytrace run --help')",
				argv[optind]);
	if (!opts->help && !opts->list_cpu_models && !opts->kernel)
		return et_error("run: --kernel FILE is required");
	return 0;
}
