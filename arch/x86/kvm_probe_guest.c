/* SPDX-License-Identifier: MIT */
#include "arch/x86/kvm_probe_guest.h"

#include <string.h>

#include "arch/x86/boot_cpu.h"
#include "arch/x86/insn.h"
#include "earlytrace/abi.h"

/* xor eax, eax; div eax */
static const uint8_t x86_div_by_zero[4] = { 0x31, 0xc0, 0xf7, 0xf0 };

/* Above the boot GDT and stack that boot_cpu_setup_pvh() uses. */
#define PROBE_IDT 0x10000
#define PROBE_STUBS 0x11000
#define PROBE_STUB_SIZE 8
#define PROBE_VECTORS 32
#define PROBE_CODE 0x12000
#define PROBE_CODE_SEL 0x08 /* boot_cpu_setup_pvh()'s flat 32-bit code segment */
#define IDT_GATE_INTR32 0x8e /* present, ring 0, 32-bit interrupt gate */

/* Every exception vector: mov al, vector; out X86_PROBE_VECTOR_PORT, al;
 * hlt; and a gate to it. */
static int write_idt(const struct guest_mem *gm, struct kvm_sregs *sregs)
{
	for (unsigned v = 0; v < PROBE_VECTORS; v++) {
		uint32_t stub = PROBE_STUBS + v * PROBE_STUB_SIZE;
		const uint8_t code[PROBE_STUB_SIZE] = {
			X86_OPCODE_MOV_AL_IMM8, (uint8_t)v,
			X86_OPCODE_OUT_IMM8_AL, X86_PROBE_VECTOR_PORT,
			X86_OPCODE_HLT,		X86_OPCODE_HLT,
			X86_OPCODE_HLT,		X86_OPCODE_HLT,
		};
		uint64_t gate = (stub & 0xffffu) | (uint64_t)PROBE_CODE_SEL << 16 |
				(uint64_t)IDT_GATE_INTR32 << 40 | (uint64_t)(stub >> 16) << 48;

		if (guest_mem_write(gm, stub, code, sizeof(code)) ||
		    guest_mem_write(gm, PROBE_IDT + v * sizeof(gate), &gate, sizeof(gate)))
			return -1;
	}
	sregs->idt.base = PROBE_IDT;
	sregs->idt.limit = PROBE_VECTORS * 8 - 1;
	return 0;
}

int x86_probe_guest_setup(const struct guest_mem *gm, enum x86_probe_test test,
			  struct x86_probe *p, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	uint8_t code[4] = { X86_OPCODE_HLT, X86_OPCODE_HLT, X86_OPCODE_HLT, X86_OPCODE_HLT };

	memset(p, 0, sizeof(*p));
	p->rip = PROBE_CODE;
	switch (test) {
	case X86_PROBE_INT3:
		code[0] = X86_OPCODE_INT3;
		break;
	case X86_PROBE_HW_BP:
		code[0] = code[1] = X86_OPCODE_NOP;
		p->bp_addr = PROBE_CODE + 1;
		break;
	case X86_PROBE_CODE_HOOK:
		x86_encode_code_hook(code, ET_PORT_CODE_HOOK);
		p->hook_next = PROBE_CODE + X86_CODE_HOOK_LEN;
		break;
	case X86_PROBE_SHUTDOWN:
		/* #DE, which KVM never intercepts (it does #UD on SVM, and a
		 * triple fault KVM raises itself keeps the state): the CPU's
		 * own shutdown, as a guest's triple fault is. */
		memcpy(code, x86_div_by_zero, sizeof(x86_div_by_zero));
		p->fault_rip = PROBE_CODE + 2;
		break;
	}
	if (boot_cpu_setup_pvh(gm, PROBE_CODE, 0, regs, sregs) || write_idt(gm, sregs))
		return -1;
	if (test == X86_PROBE_SHUTDOWN)
		sregs->idt.limit = 0; /* #DE, then #DF, cannot be delivered */
	return guest_mem_write(gm, PROBE_CODE, code, sizeof(code));
}
