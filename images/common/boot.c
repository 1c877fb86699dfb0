/* SPDX-License-Identifier: MIT */
#include "boot.h"

#include <earlytrace/abi.h>

#include "cmdline.h"
#include "machine.h"
#include "print.h"
#include "start_info.h"

/* Status reported when start_info is missing or has the wrong magic. */
#define EXIT_BAD_START_INFO 3

static struct boot_opts boot_opts;

void boot_begin(const char *arch, uint32_t start_info_pa)
{
	const struct hvm_start_info *si;
	const char *cmdline;

	print_str("earlytrace test kernel ");
	print_str(arch);
	print_str(" abi ");
	print_dec(ET_ABI_VERSION);
	print_str("\n");

	si = start_info_get(start_info_pa);
	if (!si) {
		print_line("bad start_info magic");
		machine_exit(EXIT_BAD_START_INFO);
	}

	cmdline = start_info_cmdline(si);
	print_str("cmdline: ");
	print_strn(cmdline, START_INFO_CMDLINE_MAX);
	print_str("\n");
	cmdline_parse(cmdline, START_INFO_CMDLINE_MAX, &boot_opts);

	start_info_print_memmap(si);
	start_info_print_modules(si);

	switch (boot_opts.crash) {
	case CRASH_TRIPLE:
		print_line("crash: triple fault");
		machine_triple_fault();
	case CRASH_HLT:
		print_line("crash: hlt");
		machine_hang();
	case CRASH_NONE:
		break;
	}
}

void boot_end(void)
{
	if (boot_opts.reboot_kbd) {
		print_line("reboot: kbd");
		print_line("done");
		machine_reboot_kbd();
	}
	print_line("done");
	machine_exit(boot_opts.exit_status);
}
