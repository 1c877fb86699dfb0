/* SPDX-License-Identifier: MIT */
/*
 * The throw-away guest that arch/x86/kvm/kvm_traits.c runs once per
 * process, in a scratch VM of its own, to learn what this KVM reports
 * before the real guest runs a single instruction: whether a guest int3 and a
 * debug-register breakpoint reach the VMM, whether port I/O can be
 * completed and the instruction run again (the code hooks), and whether
 * the vCPU's state survives a triple fault. Each test is
 * a few bytes of 32-bit protected-mode code (paging off, as at a PVH
 * entry, which every KVM runs) with an IDT whose every exception vector
 * writes its number to X86_PROBE_VECTOR_PORT and halts, so a test always
 * ends in an exit, whatever the KVM does.
 */
#ifndef ARCH_X86_KVM_PROBE_GUEST_H
#define ARCH_X86_KVM_PROBE_GUEST_H

#include <linux/kvm.h>
#include <stdint.h>

#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The scratch guest's RAM. */
#define X86_PROBE_MEM_SIZE (2u << 20)
/* Where an exception the guest took itself shows: a write of its vector. */
#define X86_PROBE_VECTOR_PORT 0xe5

enum x86_probe_test {
	X86_PROBE_INT3,	     /* int3; hlt */
	X86_PROBE_HW_BP,     /* nop; nop; hlt, an execution breakpoint on the second nop */
	X86_PROBE_CODE_HOOK, /* a code hook (out to ET_PORT_CODE_HOOK); hlt */
	X86_PROBE_SHUTDOWN,  /* a divide by zero with an empty IDT: a triple fault */
};

struct x86_probe {
	uint64_t rip;	  /* where the test starts */
	uint64_t bp_addr; /* X86_PROBE_HW_BP: the breakpoint's linear address */
	uint64_t hook_next; /* X86_PROBE_CODE_HOOK: rip once the hook's out completed */
	uint64_t fault_rip; /* X86_PROBE_SHUTDOWN: the faulting instruction */
};

/* Writes the test's code, the GDT and the IDT into gm and fills the
 * registers to start it (sregs from KVM_GET_SREGS). 0, or -1. */
int x86_probe_guest_setup(const struct guest_mem *gm, enum x86_probe_test test,
			  struct x86_probe *p, struct kvm_regs *regs, struct kvm_sregs *sregs);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_KVM_PROBE_GUEST_H */
