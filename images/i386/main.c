/* SPDX-License-Identifier: MIT */
/*
 * The i386 test kernel: the call tree once with paging off ("prepaging"),
 * then once with paging on, executing at the higher-half alias ("paging");
 * with regcheck, the register check runs before the call tree in each.
 * With trace=ring it runs, with paging off, the two phases around the
 * guestlib handoff instead ("early", then "ring"; common/tracering.c).
 */
#include <stdint.h>

#include "boot.h"
#include "calltree.h"
#include "compiler.h"
#include "paging.h"
#include "print.h"
#include "regcheck.h"
#include "tracering.h"

__noreturn void boot_main(uint32_t start_info_pa);

/* Entered only through its alias at KERNEL_ALIAS_BASE + physical address. */
__traced_fn __noreturn static void paging_main(void)
{
	if (boot_options()->regcheck)
		regcheck_run("paging");
	calltree_run("paging");
	boot_end();
}

void boot_main(uint32_t start_info_pa)
{
	void (*alias)(void);

	boot_begin("i386", BOOT_PROTO_PVH, start_info_pa);
	if (boot_options()->trace_ring) {
		/* Paging is off: virtual = physical. */
		tracering_run(0);
		boot_end();
	}
	if (boot_options()->regcheck)
		regcheck_run("prepaging");
	calltree_run("prepaging");

	if (!paging_enable()) {
		print_line("paging: unsupported, the CPU refused CR0.PG");
		boot_end();
	}
	print_str("paging: on, alias ");
	print_hex(KERNEL_ALIAS_BASE);
	print_str("\n");

	/*
	 * Deliberately run the same code at a second address. The kernel is
	 * linked at its physical address, but non-PIC i386 code reaches other
	 * functions with rel32 calls, which work from any address the text is
	 * mapped at, while data is reached by absolute address through the
	 * identity map. So jumping to the alias of paging_main keeps every
	 * function it calls running at its alias: each fentry site that ran at
	 * its physical address before paging now runs at physical +
	 * KERNEL_ALIAS_BASE, and a tracer must recognise both as the same site.
	 * (The build passes -fno-jump-tables because a jump table holds absolute
	 * addresses and would take execution back to the identity map.)
	 */
	alias = (void (*)(void))((uintptr_t)paging_main + KERNEL_ALIAS_BASE);
	alias();
	__builtin_unreachable();
}
