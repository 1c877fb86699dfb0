/* SPDX-License-Identifier: MIT */
/*
 * The platform's own devices, which the architecture wires (x86: the PC's
 * legacy devices on port I/O, arch/x86/hw/pc_devices.c, as Firecracker's
 * device_manager/legacy.rs and kvmtool's x86/): the console UART at its
 * place with its interrupt line, and the devices that end a run (the
 * debug exit, power-off, the reset paths). Declared here, defined in
 * arch/<arch>/hw/, so the machine names no port and no x86 device.
 */
#ifndef VMM_HW_ARCH_DEVICES_H
#define VMM_HW_ARCH_DEVICES_H

#include "vmm/hw/serial8250.h"
#include "vmm/kvm/vm.h"

struct arch_devices;

/* Initializes the devices, the console UART `console` (the caller's)
 * among them, and registers them on vm's I/O bus; the ones that end a run
 * end vm's. 0, or -1 with an error; *out is set either way, for
 * arch_devices_destroy(). */
int arch_devices_attach(struct arch_devices **out, struct vm *vm, struct serial8250 *console,
			int console_fd);
/* Destroys them, the console UART with them. NULL: nothing. */
void arch_devices_destroy(struct arch_devices *devices);

#endif /* VMM_HW_ARCH_DEVICES_H */
