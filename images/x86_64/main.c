/* SPDX-License-Identifier: MIT */
/*
 * The x86_64 test kernel: entry.S reaches long mode by either boot protocol
 * and calls boot_main (PVH) or boot_main_linux64 (Linux 64-bit boot
 * protocol) at its higher-half address, where the call tree runs once
 * ("longmode"; with regcheck, after the register check), or, with
 * trace=ring, twice around the guestlib handoff ("early", then "ring";
 * common/tracering.c). hostile=<case> runs a misbehaving guest instead
 * (common/hostile.c), nest=<case> a traced call nested in a recording
 * (common/nest.c). smp starts the other CPUs first, each running a call
 * tree of its own (smp.c).
 */
#include <stdint.h>

#include "boot.h"
#include "calltree.h"
#include "compiler.h"
#include "hostile.h"
#include "layout.h"
#include "nest.h"
#include "regcheck.h"
#include "smp.h"
#include "tracering.h"

__noreturn void boot_main(uint32_t start_info_pa);
__noreturn void boot_main_linux64(uint64_t boot_params_pa);

/* What both entries do once the loader's information has been reported. */
__traced_fn __noreturn static void longmode_main(void)
{
	if (boot_options()->hostile[0])
		hostile_run(boot_options()->hostile, -(int64_t)KERNEL_VIRT_BASE);
	if (boot_options()->nest[0])
		nest_run(boot_options()->nest, -(int64_t)KERNEL_VIRT_BASE);
	if (boot_options()->trace_ring) {
		/* The image runs at physical + KERNEL_VIRT_BASE (kernel.ld). */
		tracering_run(-(int64_t)KERNEL_VIRT_BASE);
		boot_end();
	}
	if (boot_options()->smp) {
		smp_run();
		if (boot_options()->smp_only)
			boot_end();
	}
	if (boot_options()->regcheck)
		regcheck_run("longmode");
	calltree_run("longmode");
	boot_end();
}

void boot_main(uint32_t start_info_pa)
{
	boot_begin("x86_64", BOOT_PROTO_PVH, start_info_pa);
	longmode_main();
}

void boot_main_linux64(uint64_t boot_params_pa)
{
	boot_begin("x86_64", BOOT_PROTO_LINUX64, boot_params_pa);
	longmode_main();
}
