/* SPDX-License-Identifier: MIT */
/*
 * The sleep control and status registers of a hardware-reduced ACPI
 * machine (arch/x86/boot/acpi.h): a kernel powering off writes SLP_TYP 5 (S5,
 * as \_S5 says) with SLP_EN, and the run ends with status 0, as on a
 * guest reset. Other sleep states are not offered (the DSDT has only
 * \_S5) and are ignored.
 */
#ifndef ARCH_X86_HW_ACPI_SLEEP_H
#define ARCH_X86_HW_ACPI_SLEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/run/end.h"

#ifdef __cplusplus
extern "C" {
#endif

struct acpi_sleep {
	run_stop_fn stop;
	void *vm;
};

/* Ports PC_PORT_ACPI_SLEEP_CONTROL (offset 0) and PC_PORT_ACPI_SLEEP_STATUS
 * (1), arch/x86/pc_ports.h. */
void acpi_sleep_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_HW_ACPI_SLEEP_H */
