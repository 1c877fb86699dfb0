/* SPDX-License-Identifier: MIT */
#include "arch/x86/mem_operand.h"

#include <capstone/capstone.h>
#include <stdbool.h>
#include <string.h>

#include "vmm/util/error.h"

/* Value of a general-purpose register capstone names, sized as named. */
static bool reg_value(x86_reg reg, const struct kvm_regs *r, uint64_t next_rip, uint64_t *v)
{
	static const struct {
		x86_reg r64, r32;
		size_t off;
	} gprs[] = {
		{ X86_REG_RAX, X86_REG_EAX, offsetof(struct kvm_regs, rax) },
		{ X86_REG_RBX, X86_REG_EBX, offsetof(struct kvm_regs, rbx) },
		{ X86_REG_RCX, X86_REG_ECX, offsetof(struct kvm_regs, rcx) },
		{ X86_REG_RDX, X86_REG_EDX, offsetof(struct kvm_regs, rdx) },
		{ X86_REG_RSI, X86_REG_ESI, offsetof(struct kvm_regs, rsi) },
		{ X86_REG_RDI, X86_REG_EDI, offsetof(struct kvm_regs, rdi) },
		{ X86_REG_RSP, X86_REG_ESP, offsetof(struct kvm_regs, rsp) },
		{ X86_REG_RBP, X86_REG_EBP, offsetof(struct kvm_regs, rbp) },
		{ X86_REG_R8, X86_REG_R8D, offsetof(struct kvm_regs, r8) },
		{ X86_REG_R9, X86_REG_R9D, offsetof(struct kvm_regs, r9) },
		{ X86_REG_R10, X86_REG_R10D, offsetof(struct kvm_regs, r10) },
		{ X86_REG_R11, X86_REG_R11D, offsetof(struct kvm_regs, r11) },
		{ X86_REG_R12, X86_REG_R12D, offsetof(struct kvm_regs, r12) },
		{ X86_REG_R13, X86_REG_R13D, offsetof(struct kvm_regs, r13) },
		{ X86_REG_R14, X86_REG_R14D, offsetof(struct kvm_regs, r14) },
		{ X86_REG_R15, X86_REG_R15D, offsetof(struct kvm_regs, r15) },
	};

	if (reg == X86_REG_INVALID) {
		*v = 0;
		return true;
	}
	if (reg == X86_REG_RIP || reg == X86_REG_EIP) {
		*v = next_rip; /* rip-relative: from the next instruction */
		return true;
	}
	for (size_t i = 0; i < sizeof(gprs) / sizeof(gprs[0]); i++) {
		uint64_t full;

		if (reg != gprs[i].r64 && reg != gprs[i].r32)
			continue;
		memcpy(&full, (const uint8_t *)r + gprs[i].off, sizeof(full));
		*v = reg == gprs[i].r32 ? (uint32_t)full : full;
		return true;
	}
	return false;
}

static uint64_t segment_base(x86_reg seg, const struct kvm_sregs *s, bool long_mode)
{
	switch (seg) {
	case X86_REG_FS:
		return s->fs.base;
	case X86_REG_GS:
		return s->gs.base;
	case X86_REG_ES:
		return long_mode ? 0 : s->es.base;
	case X86_REG_CS:
		return long_mode ? 0 : s->cs.base;
	case X86_REG_SS:
		return long_mode ? 0 : s->ss.base;
	default:
		return long_mode ? 0 : s->ds.base;
	}
}

int x86_decode_for_emulation(const uint8_t *code, size_t len, enum x86_code_mode mode,
			     const struct kvm_regs *regs, const struct kvm_sregs *sregs,
			     struct x86_decoded *out)
{
	cs_mode cmode = mode == X86_CODE64 ? CS_MODE_64 : mode == X86_CODE32 ? CS_MODE_32 : CS_MODE_16;
	csh h;
	cs_insn *insn;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (cs_open(CS_ARCH_X86, cmode, &h) != CS_ERR_OK)
		return et_error("capstone cannot decode x86");
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	if (cs_disasm(h, code, len, regs->rip, 1, &insn) != 1) {
		cs_close(&h);
		return et_error("instruction at 0x%llx does not decode", (unsigned long long)regs->rip);
	}
	out->len = insn->size;
	out->id = insn->id == X86_INS_LDMXCSR	? X86_INSN_LDMXCSR
		  : insn->id == X86_INS_STMXCSR ? X86_INSN_STMXCSR
						: X86_INSN_OTHER;
	ret = 0;
	for (unsigned i = 0; i < insn->detail->x86.op_count; i++) {
		const cs_x86_op *op = &insn->detail->x86.operands[i];
		uint64_t base, index;
		bool long_mode = mode == X86_CODE64;

		if (op->type != X86_OP_MEM)
			continue;
		if (!reg_value(op->mem.base, regs, regs->rip + insn->size, &base) ||
		    !reg_value(op->mem.index, regs, regs->rip + insn->size, &index)) {
			ret = et_error("memory operand uses a register the VMM does not read");
			break;
		}
		out->has_mem = true;
		out->mem_size = op->size;
		out->linear = segment_base(op->mem.segment, sregs, long_mode) + base +
			      index * (uint64_t)op->mem.scale + (uint64_t)op->mem.disp;
		if (!long_mode)
			out->linear = (uint32_t)out->linear;
		break;
	}
	cs_free(insn, 1);
	cs_close(&h);
	return ret;
}
