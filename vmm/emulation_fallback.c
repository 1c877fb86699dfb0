/* SPDX-License-Identifier: MIT */
#include "vmm/emulation_fallback.h"

#include <linux/kvm.h>
#include <sys/ioctl.h>

#include "arch/x86/boot_cpu.h"
#include "arch/x86/insn.h"

#define X86_CR0_MP (1ull << 1)
#define X86_CR0_TS (1ull << 3)
#define X87_FSW_ES 0x80 /* an unmasked x87 exception is pending */

/* Delivers an exception through the guest's IDT, as the CPU would. */
static bool inject_exception(struct vcpu *vcpu, unsigned vector)
{
	struct kvm_vcpu_events events;

	if (ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &events) < 0)
		return false;
	events.exception.injected = 1;
	events.exception.nr = (uint8_t)vector;
	events.exception.has_error_code = 0;
	events.flags = 0;
	return ioctl(vcpu->fd, KVM_SET_VCPU_EVENTS, &events) == 0;
}

static bool skip(struct vcpu *vcpu, struct kvm_regs *regs, unsigned len)
{
	regs->rip += len;
	return ioctl(vcpu->fd, KVM_SET_REGS, regs) == 0;
}

/* FWAIT: #NM when the FPU belongs to another task (CR0.TS with CR0.MP),
 * #MF when an unmasked x87 exception is pending, else nothing. Linux runs
 * one whenever a task that used the FPU exits. */
static bool do_fwait(struct vcpu *vcpu, struct kvm_regs *regs, const struct kvm_sregs *sregs)
{
	struct kvm_fpu fpu;

	if ((sregs->cr0 & (X86_CR0_TS | X86_CR0_MP)) == (X86_CR0_TS | X86_CR0_MP))
		return inject_exception(vcpu, X86_VECTOR_NM);
	if (ioctl(vcpu->fd, KVM_GET_FPU, &fpu) < 0)
		return false;
	if (fpu.fsw & X87_FSW_ES)
		return inject_exception(vcpu, X86_VECTOR_MF);
	return skip(vcpu, regs, 1);
}

bool emulation_fallback(struct vcpu *vcpu)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	const uint8_t *insn;
	uint64_t phys;
	bool done;

	if (vcpu->run->internal.suberror != KVM_INTERNAL_ERROR_EMULATION ||
	    ioctl(vcpu->fd, KVM_GET_REGS, &regs) < 0 || ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0 ||
	    vcpu_linear_to_phys(vcpu, sregs.cs.base + regs.rip, &phys))
		return false;
	insn = guest_mem_ptr(&vcpu->vm->mem, phys, 1);
	if (!insn)
		return false;
	switch (*insn) {
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
