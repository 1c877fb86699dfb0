/* SPDX-License-Identifier: MIT */
/*
 * The CPU state a kernel expects at its entry point, per boot protocol.
 * Functions here write the boot GDT/IDT into guest memory and fill the
 * register structures; the caller hands those to KVM.
 */
#ifndef ARCH_X86_BOOT_CPU_H
#define ARCH_X86_BOOT_CPU_H

#include <linux/kvm.h>
#include <stdint.h>

#include "vmm/kvm/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define X86_CR0_PE (1ull << 0)
#define X86_CR0_ET (1ull << 4)
#define X86_CR0_PG (1ull << 31)
#define X86_CR0_NE (1ull << 5)
#define X86_CR4_PAE (1ull << 5)
#define X86_EFER_LME (1ull << 8)
#define X86_EFER_LMA (1ull << 10)
#define X86_RFLAGS_RESERVED (1ull << 1) /* always 1 */

/*
 * PVH entry (Xen's HVM direct boot ABI, as Linux's pvh_start_xen expects):
 * 32-bit protected mode, paging off, flat CS/DS/ES/SS, TR a 32-bit TSS,
 * ebx = start_info, interrupts off. `sregs` should come from KVM_GET_SREGS
 * so fields we do not own (APIC base, ...) keep KVM's values.
 */
int boot_cpu_setup_pvh(const struct guest_mem *gm, uint32_t entry, uint32_t start_info,
		       struct kvm_regs *regs, struct kvm_sregs *sregs);

/*
 * Linux 64-bit boot protocol (Documentation/x86/boot.rst): long mode with
 * the identity map at `cr3`, __BOOT_CS = 0x10 (64-bit code), __BOOT_DS =
 * 0x18, interrupts off, rsi = boot_params.
 */
int boot_cpu_setup_long64(const struct guest_mem *gm, uint64_t entry, uint64_t boot_params,
			  uint64_t cr3, struct kvm_regs *regs, struct kvm_sregs *sregs);

/* FPU state at reset that 32-bit entry code may rely on. */
void boot_cpu_setup_fpu(struct kvm_fpu *fpu);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_BOOT_CPU_H */
