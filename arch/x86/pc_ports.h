/* SPDX-License-Identifier: MIT */
/*
 * The I/O port map and the interrupt lines of the PC earlytrace builds,
 * in one place, as arch/x86/layout.h is for guest-physical memory: every
 * port something answers, in the VMM (vmm/machine/machine.c registers them on the
 * I/O bus) or inside KVM.
 *
 * Macros only and no includes, so the freestanding test kernels (images/)
 * share this file instead of copying the numbers.
 *
 * Inside KVM, never seen by the VMM (KVM_CREATE_IRQCHIP, KVM_CREATE_PIT2):
 *   0x20-0x21, 0xa0-0xa1  the two 8259 interrupt controllers
 *   0x40-0x43             the 8254 timer
 *   0x61                  the speaker gate, which Linux polls while it
 *                         calibrates (KVM_PIT_SPEAKER_DUMMY keeps it there)
 *   0x4d0-0x4d1           the 8259s' edge/level control
 * The I/O APIC and the local APIC are MMIO (layout.h).
 *
 * earlytrace's own ports, 0x510-0x51f (debug exit, hypercall, trampoline
 * drain), are guest ABI: ET_PORT_* in guestlib/include/earlytrace/abi.h.
 *
 * Any other port reaches the VMM unclaimed: reads return all ones, writes
 * are dropped (vmm/kvm/iobus.c).
 */
#ifndef ARCH_X86_PC_PORTS_H
#define ARCH_X86_PC_PORTS_H

/* i8042 keyboard controller (arch/x86/hw/i8042.c): no keyboard, but the
 * self tests Linux runs and the reset line that ends a run. */
#define PC_PORT_I8042_DATA 0x60
#define PC_PORT_I8042_CMD 0x64	/* status on read */
#define PC_I8042_CMD_RESET 0xfe /* written to PC_PORT_I8042_CMD: pulse the reset line */

/* POST code port: no device on purpose, so an access is a plain VM exit
 * (the test kernels' exit timeline uses it). */
#define PC_PORT_POST 0x80

/* COM1, a 16550 UART (vmm/hw/serial8250.c): 8 registers, the console. */
#define PC_PORT_COM1 0x3f8
#define PC_IRQ_COM1 4 /* its interrupt line on the 8259 */

/* The PCI reset control register (Intel's RST_CNT, as on PIIX/ICH PCs;
 * arch/x86/hw/reset_control.c): a write with PC_RESET_CONTROL_CPU set resets
 * the machine. The ACPI FADT names it as the reset register, with
 * PC_RESET_CONTROL_VALUE. */
#define PC_PORT_RESET_CONTROL 0xcf9
#define PC_RESET_CONTROL_SYS 0x02 /* a hard reset, not just the CPU's */
#define PC_RESET_CONTROL_CPU 0x04 /* 0 -> 1: do the reset */
#define PC_RESET_CONTROL_VALUE (PC_RESET_CONTROL_SYS | PC_RESET_CONTROL_CPU)

/* Hardware-reduced ACPI's sleep registers, named by the FADT
 * (arch/x86/boot/acpi.c, arch/x86/hw/acpi_sleep.c): write (SLP_TYP << 2) | SLP_EN to
 * the control register to enter a sleep state; the status one reads 0. */
#define PC_PORT_ACPI_SLEEP_CONTROL 0x600
#define PC_PORT_ACPI_SLEEP_STATUS 0x601

#endif /* ARCH_X86_PC_PORTS_H */
