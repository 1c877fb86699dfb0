/* SPDX-License-Identifier: MIT */
/*
 * The x86_64 test kernel: entry.S reaches long mode and calls boot_main at
 * its higher-half address, where the call tree runs once ("longmode").
 */
#include <stdint.h>

#include "boot.h"
#include "calltree.h"
#include "compiler.h"

__noreturn void boot_main(uint32_t start_info_pa);

void boot_main(uint32_t start_info_pa)
{
	boot_begin("x86_64", start_info_pa);
	calltree_run("longmode");
	boot_end();
}
