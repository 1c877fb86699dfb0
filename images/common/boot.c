/* SPDX-License-Identifier: MIT */
#include "boot.h"

#include <earlytrace/abi.h>

#include "boot_params.h"
#include "cmdline.h"
#include "exitseq.h"
#include "machine.h"
#include "panic.h"
#include "print.h"
#include "reset.h"
#include "start_info.h"

/* Status reported when start_info or boot_params is missing or has the
 * wrong magic. */
#define EXIT_BAD_BOOT_INFO 3
/* Status when reset=acpi found no reset register to write. */
#define EXIT_RESET_FAILED 6

static struct boot_opts boot_opts;

/* Prints and applies the command line. */
static void boot_cmdline(const char *cmdline, size_t max)
{
	print_str("cmdline: ");
	print_strn(cmdline, max);
	print_str("\n");
	cmdline_parse(cmdline, max, &boot_opts);
}

static void boot_pvh(uint64_t start_info_pa)
{
	const struct hvm_start_info *si = NULL;

	if (start_info_pa <= UINT32_MAX)
		si = start_info_get((uint32_t)start_info_pa);
	if (!si) {
		print_line("bad start_info magic");
		machine_exit(EXIT_BAD_BOOT_INFO);
	}
	boot_cmdline(start_info_cmdline(si), START_INFO_CMDLINE_MAX);
	start_info_print_memmap(si);
	start_info_print_modules(si);
}

static void boot_linux64(uint64_t boot_params_pa)
{
	const struct boot_params *bp = boot_params_get(boot_params_pa);

	if (!bp) {
		print_line("bad boot_params");
		machine_exit(EXIT_BAD_BOOT_INFO);
	}
	boot_cmdline(boot_params_cmdline(bp), BOOT_PARAMS_CMDLINE_MAX);
	boot_params_print_memmap(bp);
	boot_params_print_modules(bp);
}

void boot_begin(const char *arch, enum boot_proto proto, uint64_t info_pa)
{
	print_str("earlytrace test kernel ");
	print_str(arch);
	print_str(" abi ");
	print_dec(ET_ABI_VERSION);
	print_str("\n");

	switch (proto) {
	case BOOT_PROTO_PVH:
		print_line("boot: pvh");
		boot_pvh(info_pa);
		break;
	case BOOT_PROTO_LINUX64:
		print_line("boot: linux64");
		boot_linux64(info_pa);
		break;
	}

	if (boot_opts.exit_sequence)
		exitseq_run();

	switch (boot_opts.crash) {
	case CRASH_TRIPLE:
		print_line("crash: triple fault");
		machine_triple_fault();
	case CRASH_HLT:
		print_line("crash: hlt");
		machine_hang();
	case CRASH_PANIC:
		print_line("crash: panic");
		panic_timeout = -1;
		panic("requested on the command line: crash=%s, code %d", "panic", 42);
	case CRASH_PANIC_HANG:
		print_line("crash: panic-hang");
		panic_timeout = 0;
		panic("requested on the command line: crash=%s, code %d", "panic-hang", -7);
	case CRASH_HANG_LOOP:
		print_line("crash: hang-loop");
		machine_spin();
	case CRASH_INTERNAL:
		print_line("crash: internal");
		machine_unemulatable();
	case CRASH_NONE:
		break;
	}
}

const struct boot_opts *boot_options(void)
{
	return &boot_opts;
}

void boot_end(void)
{
	if (boot_opts.reset != RESET_NONE) {
		print_line("done");
		reset_machine(boot_opts.reset);
		machine_exit(EXIT_RESET_FAILED);
	}
	print_line("done");
	/* end=spin: a guest that is still running (without exits) after its
	 * work, for tests of what the VMM does meanwhile. */
	if (boot_opts.end_spin)
		machine_spin();
	machine_exit(boot_opts.exit_status);
}
