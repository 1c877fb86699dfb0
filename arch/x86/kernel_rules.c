// SPDX-License-Identifier: MIT
/* What an x86 kernel image must be (vmm/loader/kernel_image.h): i386 or
 * x86-64, loaded above the first MiB, where the boot structures live
 * (layout.h). */
#include <elf.h>

#include "arch/x86/layout.h"
#include "vmm/loader/kernel_image.h"

bool arch_elf_machine_ok(unsigned machine)
{
	return machine == EM_X86_64 || machine == EM_386;
}

const char *arch_elf_machines(void)
{
	return "x86 (EM_386 or EM_X86_64)";
}

uint64_t arch_kernel_lowest_paddr(const char **in_words)
{
	*in_words = "1 MiB";
	return LAYOUT_HIMEM_START;
}
