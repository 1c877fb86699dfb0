/* SPDX-License-Identifier: MIT */
/*
 * The smallest ACPI a kernel needs to power the machine off and reset it:
 * RSDP, XSDT, a hardware-reduced FADT (no FACS, no SCI, no PM1 blocks:
 * sleep goes through one sleep control register, arch/x86/hw/acpi_sleep.c; the
 * reset register is the reset control register at 0xcf9 with value 0x06,
 * arch/x86/hw/reset_control.c, as on QEMU's q35) and a DSDT holding only \_S5.
 * With one vCPU no MADT: the kernel keeps finding the interrupt
 * controllers as it does without ACPI. With several, a MADT names each
 * vCPU's local APIC (APIC id = vCPU id), the I/O APIC and the PIT's
 * IRQ 0 on GSI 2, as kvmtool and QEMU do: Linux starts application
 * processors only where firmware lists them. A guest that does not want
 * ACPI boots with acpi=off.
 *
 * Linux resets through the reset register only with reboot=a: on a
 * hardware-reduced machine it prefers EFI and, without EFI, falls back to
 * the BIOS reset vector (arch/x86/kvm/reset_vector.c).
 */
#ifndef ARCH_X86_BOOT_ACPI_H
#define ARCH_X86_BOOT_ACPI_H

#include <stdint.h>

#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The SLP_TYP value \_S5 names: written with SLP_EN to the sleep control
 * register (PC_PORT_ACPI_SLEEP_CONTROL in arch/x86/pc_ports.h) it powers
 * the machine off. */
#define ACPI_SLEEP_TYPE_S5 5

/* Writes the tables at LAYOUT_ACPI_TABLES; returns the RSDP's address,
 * or 0 with an error. */
uint64_t acpi_write_tables(const struct guest_mem *gm);
/* The same for a machine with nr_cpus vCPUs (a MADT when more than one). */
uint64_t acpi_write_tables_cpus(const struct guest_mem *gm, unsigned nr_cpus);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_BOOT_ACPI_H */
