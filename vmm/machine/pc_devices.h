/* SPDX-License-Identifier: MIT */
/*
 * The PC's legacy devices on port I/O, x86 only (as Firecracker's
 * device_manager/legacy.rs): COM1, the i8042's reset line, the ACPI
 * sleep and reset control registers, and earlytrace's debug-exit port.
 * Each device is a vmm/hw/ model; this file owns them and puts them at
 * their ports (arch/x86/pc_ports.h).
 */
#ifndef VMM_MACHINE_PC_DEVICES_H
#define VMM_MACHINE_PC_DEVICES_H

#include "vmm/hw/acpi_sleep.h"
#include "vmm/hw/debug_exit.h"
#include "vmm/hw/i8042.h"
#include "vmm/hw/reset_control.h"
#include "vmm/hw/serial8250.h"
#include "vmm/kvm/vm.h"

struct pc_devices {
	struct serial8250 com1; /* the console: its output goes to console_fd */
	struct i8042 kbc;
	struct debug_exit debug_exit;
	struct acpi_sleep acpi_sleep;
	struct reset_control reset_control;
};

/* Initializes the devices and registers them on vm's I/O bus; the ones
 * that end a run end vm's. 0, or -1 with an error. */
int pc_devices_attach(struct pc_devices *pc, struct vm *vm, int console_fd);
void pc_devices_destroy(struct pc_devices *pc);

#endif /* VMM_MACHINE_PC_DEVICES_H */
