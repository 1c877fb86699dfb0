/* SPDX-License-Identifier: MIT */
/*
 * The BIOS reset vector (LAYOUT_RESET_VECTOR, F000:FFF0). A kernel that
 * restarts "through the BIOS" leaves long mode, enters real mode and jumps
 * there, expecting firmware to reset the machine: Linux does so with
 * reboot=b, and by default on earlytrace's hardware-reduced ACPI machine
 * (it picks EFI there, and without EFI falls back to the BIOS). earlytrace
 * has no firmware; it puts ten bytes of real-mode code at the vector that
 * write the reset value to the reset control register
 * (arch/x86/hw/reset_control.c), so this path ends the run like the others.
 * The functions are the hooks vmm/kvm/arch.h declares.
 */
#include "vmm/kvm/arch.h"

#include <string.h>

#include "arch/x86/cpu_mode.h"
#include "arch/x86/layout.h"
#include "arch/x86/pc_ports.h"
#include "vmm/util/error.h"

/*
 * 16-bit code, entered at its first byte. A real BIOS would start its
 * power-on self test here; a reset ends earlytrace's run, so the code asks
 * for one at once, the way the ACPI reset register does. Instructions a
 * minimal emulator runs (kvm-pvm emulates real mode instruction by
 * instruction): mov, out, cli, hlt, a short jump.
 */
static const uint8_t reset_code[] = {
	0xb0, PC_RESET_CONTROL_VALUE,		/* mov al, value */
	0xba, PC_PORT_RESET_CONTROL & 0xff,	/* mov dx, port */
	PC_PORT_RESET_CONTROL >> 8,
	0xee,					/* out dx, al */
	0xfa,					/* 1: cli */
	0xf4,					/* hlt */
	0xeb, 0xfc,				/* jmp 1b: if the VMM went on */
};

_Static_assert(sizeof(reset_code) <= LAYOUT_RESET_VECTOR_SIZE, "reset vector code too long");

int arch_install_reset_code(const struct guest_mem *gm)
{
	uint8_t *p = guest_mem_ptr(gm, LAYOUT_RESET_VECTOR, LAYOUT_RESET_VECTOR_SIZE);

	if (!p)
		return et_error("no RAM at the reset vector 0x%x", LAYOUT_RESET_VECTOR);
	memset(p, 0xf4, LAYOUT_RESET_VECTOR_SIZE); /* hlt after the code */
	memcpy(p, reset_code, sizeof(reset_code));
	return 0;
}

bool arch_runs_reset_code(struct vcpu *vcpu)
{
	struct kvm_regs r;
	struct kvm_sregs s;
	uint64_t ip_base = LAYOUT_RESET_VECTOR - LAYOUT_RESET_VECTOR_CS_BASE;

	if (vcpu_get_regs(vcpu, &r, &s) < 0)
		return false;
	/* rip is at the out or just after it, depending on the KVM. */
	return !(s.cr0 & X86_CR0_PE) && s.cs.base == LAYOUT_RESET_VECTOR_CS_BASE &&
	       r.rip >= ip_base && r.rip < ip_base + LAYOUT_RESET_VECTOR_SIZE;
}
