/* SPDX-License-Identifier: MIT */
#include "arch/x86/kvm/reset_vector.h"

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

int reset_vector_install(const struct guest_mem *gm)
{
	uint8_t *p = guest_mem_ptr(gm, LAYOUT_RESET_VECTOR, LAYOUT_RESET_VECTOR_SIZE);

	if (!p)
		return et_error("no RAM at the reset vector 0x%x", LAYOUT_RESET_VECTOR);
	memset(p, 0xf4, LAYOUT_RESET_VECTOR_SIZE); /* hlt after the code */
	memcpy(p, reset_code, sizeof(reset_code));
	return 0;
}

bool reset_vector_is_running(struct vcpu *vcpu)
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
