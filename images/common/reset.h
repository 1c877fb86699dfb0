/* SPDX-License-Identifier: MIT */
/*
 * reset=<method>: the ways a PC kernel resets its machine, as Linux's
 * reboot= options name them, each done the way Linux does it, so the
 * VMM's handling of every path is tested with a kernel that takes it.
 */
#ifndef IMAGES_RESET_H
#define IMAGES_RESET_H

#include "compiler.h"

enum reset_method {
	RESET_NONE,
	RESET_KBD,	/* reboot=k: 0xfe to the i8042's command port */
	RESET_BIOS,	/* reboot=b: real mode, then a jump to F000:FFF0 */
	RESET_ACPI,	/* reboot=a: the FADT's reset register */
	RESET_CF9,	/* reboot=p: the PCI reset control register at 0xcf9 */
	RESET_TRIPLE,	/* reboot=t: an empty IDT, then int3 */
};

/* Prints "reset: <method>" (and what it found, for acpi) and resets.
 * Returns only when the method could not even be tried (no FADT reset
 * register), after saying why. */
void reset_machine(enum reset_method how);

/* reset_bios.S: real mode and the reset vector; never returns. */
__noreturn void reset_bios(void);

#endif /* IMAGES_RESET_H */
