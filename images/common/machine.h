/* SPDX-License-Identifier: MIT */
/* Ways to end a run: the ABI's debug exit, an i8042 reset, and crashes. */
#ifndef IMAGES_MACHINE_H
#define IMAGES_MACHINE_H

#include <stdint.h>

#include "compiler.h"

/* Write status to ET_PORT_DEBUG_EXIT; the VMM exits with status & 0xff. */
__noreturn void machine_exit(uint32_t status);
/* Pulse the reset line through the i8042; the VMM stops cleanly. */
__noreturn void machine_reboot_kbd(void);
/* Fault with no usable IDT, so the CPU shuts down (KVM_EXIT_SHUTDOWN). */
__noreturn void machine_triple_fault(void);
/* cli; hlt forever: a hang only the VMM's timeout ends. */
__noreturn void machine_hang(void);
/* Spin forever inside this (traced) function: no exits, no calls. */
__noreturn void machine_spin(void);
/* Run an instruction KVM's emulator does not know (x87 fild) on an MMIO
 * address, so KVM must emulate it and cannot: KVM_EXIT_INTERNAL_ERROR. */
__noreturn void machine_unemulatable(void);

#endif /* IMAGES_MACHINE_H */
