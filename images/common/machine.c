/* SPDX-License-Identifier: MIT */
#include "machine.h"

#include <arch/x86/layout.h>
#include <arch/x86/pc_ports.h>
#include <earlytrace/abi.h>

#include "io.h"
#include "print.h"

void machine_hang(void)
{
	for (;;)
		__asm__ volatile("cli; hlt");
}

void machine_spin(void)
{
	for (;;)
		__asm__ volatile("" ::: "memory");
}

void machine_unemulatable(void)
{
	/* No RAM there: every access is an MMIO exit KVM must emulate. */
	__asm__ volatile("fildl (%0)" : : "r"((uintptr_t)LAYOUT_UNCLAIMED_MMIO) : "memory");
	machine_hang();
}

void machine_exit(uint32_t status)
{
	outl(ET_PORT_DEBUG_EXIT, status);
	/* Only reached if the VMM ignores the port. */
	machine_hang();
}

void machine_reboot_kbd(void)
{
	outb(PC_PORT_I8042_CMD, PC_I8042_CMD_RESET);
	for (;;)
		__asm__ volatile("pause");
}

void machine_triple_fault(void)
{
	/* lidt takes limit:base; base is 32 bits in protected mode, 64 in long
	 * mode, which is exactly the width of a pointer in each kernel. */
	static const struct {
		uint16_t limit;
		uintptr_t base;
	} __attribute__((packed)) empty_idt = { 0, 0 };

	/*
	 * With a zero-limit IDT the #UD cannot be delivered, the resulting #GP
	 * cannot either, nor the double fault: the CPU shuts down. ud2 rather
	 * than int3, because a tracing VMM intercepts #BP for its own sites,
	 * and an empty IDT with an int3 is how Linux resets (reboot=t), which
	 * a VMM takes for a reset: the nop keeps an int3 byte of the lidt's
	 * address from standing right before the ud2.
	 */
	__asm__ volatile("lidt %0; nop; ud2" : : "m"(empty_idt));
	__builtin_unreachable();
}
