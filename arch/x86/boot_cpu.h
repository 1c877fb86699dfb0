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

#include "arch/x86/cpu_mode.h"
#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* The MSRs firmware sets before any kernel runs (fast strings, MTRRs on
 * with write-back default, AMD's HWCR.TscFreqSel on AMD hosts), in the
 * order to set them: KVM_SET_MSRS stops at the first it refuses, so the
 * optional ones come last. Fills up to `max` entries; returns how many. */
#define BOOT_CPU_MAX_MSRS 3
unsigned boot_cpu_msrs(struct kvm_msr_entry *out, unsigned max);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_BOOT_CPU_H */
