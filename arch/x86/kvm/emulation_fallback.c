/* SPDX-License-Identifier: MIT */
#include "arch/x86/kvm/emulation_fallback.h"

#include <linux/kvm.h>
#include <string.h>

#include "arch/x86/cpu_mode.h"
#include "arch/x86/insn.h"
#include "arch/x86/mem_operand.h"
#include "arch/x86/page_walk.h"

#define MXCSR_VALID_BITS 0xffffu
#define X87_FSW_ES 0x80 /* an unmasked x87 exception is pending */

/* Delivers an exception through the guest's IDT, as the CPU would. */
static bool inject_exception(struct vcpu *vcpu, unsigned vector)
{
	return vcpu_inject_exception(vcpu, vector, false, 0) == 0;
}

static bool skip(struct vcpu *vcpu, struct kvm_regs *regs, unsigned len)
{
	regs->rip += len;
	return vcpu_set_regs(vcpu, regs) == 0;
}

/* Writes len bytes at a linear address, page by page. */
static int write_virt(const struct guest_mem *gm, const struct arch_paging *pg, uint64_t va,
		      const void *buf, size_t len)
{
	const uint8_t *src = buf;

	while (len) {
		uint64_t pa, end;
		size_t n;
		uint8_t *dst;

		if (arch_translate(gm, pg, va, &pa, &end))
			return -1;
		n = end && end - va < len ? (size_t)(end - va) : len;
		dst = guest_mem_ptr(gm, pa, n);
		if (!dst)
			return -1;
		memcpy(dst, src, n);
		src += n;
		va += n;
		len -= n;
	}
	return 0;
}

/* LDMXCSR / STMXCSR m32: SSE control register to and from memory. Linux
 * runs LDMXCSR in kernel_fpu_begin(). Faults as the CPU orders them:
 * #UD without CR4.OSFXSR, #NM with CR0.TS, #GP on reserved MXCSR bits. */
static bool do_mxcsr(struct vcpu *vcpu, struct kvm_regs *regs, const struct kvm_sregs *sregs,
		     const struct arch_paging *pg, const struct x86_decoded *d)
{
	struct kvm_fpu fpu;
	uint32_t value;

	if (!d->has_mem || d->mem_size != 4)
		return false;
	if (!(sregs->cr4 & X86_CR4_OSFXSR))
		return inject_exception(vcpu, X86_VECTOR_UD);
	if (sregs->cr0 & X86_CR0_TS)
		return inject_exception(vcpu, X86_VECTOR_NM);
	if (vcpu_get_fpu(vcpu, &fpu))
		return false;
	if (d->id == X86_INSN_LDMXCSR) {
		if (arch_read_virt(&vcpu->vm->mem, pg, d->linear, &value, sizeof(value)))
			return false; /* unmapped: left to the crash report */
		if (value & ~MXCSR_VALID_BITS)
			return vcpu_inject_exception(vcpu, X86_VECTOR_GP, true, 0) == 0;
		fpu.mxcsr = value;
		if (vcpu_set_fpu(vcpu, &fpu))
			return false;
	} else {
		value = fpu.mxcsr;
		if (write_virt(&vcpu->vm->mem, pg, d->linear, &value, sizeof(value)))
			return false;
	}
	return skip(vcpu, regs, (unsigned)d->len);
}

/* FWAIT: #NM when the FPU belongs to another task (CR0.TS with CR0.MP),
 * #MF when an unmasked x87 exception is pending, else nothing. Linux runs
 * one whenever a task that used the FPU exits. */
static bool do_fwait(struct vcpu *vcpu, struct kvm_regs *regs, const struct kvm_sregs *sregs)
{
	struct kvm_fpu fpu;

	if ((sregs->cr0 & (X86_CR0_TS | X86_CR0_MP)) == (X86_CR0_TS | X86_CR0_MP))
		return inject_exception(vcpu, X86_VECTOR_NM);
	if (vcpu_get_fpu(vcpu, &fpu))
		return false;
	if (fpu.fsw & X87_FSW_ES)
		return inject_exception(vcpu, X86_VECTOR_MF);
	return skip(vcpu, regs, 1);
}

/* Instructions with a 0f escape: decoded fully, then finished if known. */
static bool do_two_byte(struct vcpu *vcpu, struct kvm_regs *regs, const struct kvm_sregs *sregs)
{
	struct arch_paging pg = arch_paging_of(sregs);
	uint8_t code[X86_MAX_INSN_LEN];
	size_t len = sizeof(code);
	struct x86_decoded d;
	uint64_t pa, end, rip = x86_instruction_pointer(sregs, regs);

	/* Up to 15 bytes, or up to the end of the page when the next one is
	 * not mapped (the instruction may still fit). */
	if (arch_translate(&vcpu->vm->mem, &pg, rip, &pa, &end))
		return false;
	if (arch_read_virt(&vcpu->vm->mem, &pg, rip, code, len) && end && end - rip < len)
		len = (size_t)(end - rip);
	if (arch_read_virt(&vcpu->vm->mem, &pg, rip, code, len) ||
	    x86_decode_for_emulation(code, len, x86_code_mode(sregs), regs, sregs, &d))
		return false;
	switch (d.id) {
	case X86_INSN_LDMXCSR:
	case X86_INSN_STMXCSR:
		return do_mxcsr(vcpu, regs, sregs, &pg, &d);
	default:
		return false;
	}
}

/* With several vCPUs, the code at rip may have changed since KVM fetched
 * it: another vCPU's exit put a site's own bytes back over the int3 this
 * vCPU stopped at (--oneshot, the handoff) while its exit waited for the
 * exit lock. The bytes KVM reports then differ from memory's; the vCPU
 * resumes at rip and KVM fetches the instruction now there. */
static bool code_changed_since_fetch(struct vcpu *vcpu, uint8_t now)
{
	const struct kvm_run *run = vcpu->run;

	if (!vcpu->vm || vcpu->vm->nr_vcpus < 2 || run->emulation_failure.ndata < 3 ||
	    !(run->emulation_failure.flags & KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES) ||
	    !run->emulation_failure.insn_size)
		return false;
	if (run->emulation_failure.insn_bytes[0] == now)
		return false;
	if (run->emulation_failure.insn_bytes[0] == X86_OPCODE_INT3)
		__atomic_fetch_add(&vcpu->stale_int3, 1, __ATOMIC_RELAXED);
	return true;
}

bool emulation_fallback(struct vcpu *vcpu)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct arch_paging pg;
	const uint8_t *insn;
	uint64_t phys;
	bool done;

	if (vcpu->run->internal.suberror != KVM_INTERNAL_ERROR_EMULATION ||
	    vcpu_get_regs(vcpu, &regs, &sregs) < 0)
		return false;
	/* Our own walk: no KVM_TRANSLATE round trip on every breakpoint hit. */
	pg = arch_paging_of(&sregs);
	if (arch_translate(&vcpu->vm->mem, &pg, x86_instruction_pointer(&sregs, &regs), &phys, NULL))
		return false;
	insn = guest_mem_ptr(&vcpu->vm->mem, phys, 1);
	if (!insn)
		return false;
	if (code_changed_since_fetch(vcpu, *insn))
		return true; /* registers untouched: the guest goes on at rip */
	switch (*insn) {
	case X86_OPCODE_0F:
		done = do_two_byte(vcpu, &regs, &sregs);
		break;
	case X86_OPCODE_INT3:
		/* A tracer's breakpoint, or the guest's own (Linux's boot-time
		 * int3 self-test), which gets the #BP it would have raised. */
		done = guest_debug_int3(vcpu, &regs, &sregs);
		break;
	case X86_OPCODE_FWAIT:
		done = do_fwait(vcpu, &regs, &sregs);
		break;
	default:
		return false;
	}
	if (done)
		vcpu->nr_emulation_fallbacks++;
	return done;
}
