/* SPDX-License-Identifier: MIT */
/*
 * The PC's legacy devices on port I/O, x86 only (as Firecracker's
 * device_manager/legacy.rs): COM1, the i8042's reset line, the ACPI
 * sleep and reset control registers, and earlytrace's debug-exit port.
 * The PC-only models live beside this file (arch/x86/hw/), the 8250 UART
 * and the debug exit, which other platforms have too, in vmm/hw/; this
 * file puts them at their ports (arch/x86/pc_ports.h). The machine reaches
 * it through vmm/hw/arch_devices.h.
 */
#ifndef ARCH_X86_HW_PC_DEVICES_H
#define ARCH_X86_HW_PC_DEVICES_H

#include "arch/x86/hw/acpi_sleep.h"
#include "arch/x86/hw/i8042.h"
#include "arch/x86/hw/reset_control.h"
#include "vmm/hw/arch_devices.h"
#include "vmm/hw/debug_exit.h"
#include "vmm/hw/serial8250.h"

struct arch_devices {
	struct serial8250 *com1; /* the console (the machine's): its output goes to console_fd */
	struct i8042 kbc;
	struct debug_exit debug_exit;
	struct acpi_sleep acpi_sleep;
	struct reset_control reset_control;
};

#endif /* ARCH_X86_HW_PC_DEVICES_H */
