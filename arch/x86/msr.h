/* SPDX-License-Identifier: MIT */
/* Model-specific registers the VMM reads or sets, by architectural index. */
#ifndef ARCH_X86_MSR_H
#define ARCH_X86_MSR_H

#define X86_MSR_IA32_TSC 0x10
#define X86_MSR_IA32_MISC_ENABLE 0x1a0
#define X86_MSR_MISC_ENABLE_FAST_STRING (1ull << 0)
#define X86_MSR_MTRR_DEF_TYPE 0x2ff
#define X86_MTRR_DEF_TYPE_ENABLE_WB ((1ull << 11) | 6) /* MTRRs on, default write-back */
/* AMD's HWCR: firmware sets TscFreqSel (the TSC counts at the P0
 * frequency) on every CPU with an invariant TSC, and Linux warns
 * "[Firmware Bug]: TSC doesn't count with P0 frequency!" (and takes a
 * different path than on real hardware or under QEMU) when it is clear. */
#define X86_MSR_K7_HWCR 0xc0010015
#define X86_MSR_K7_HWCR_TSC_FREQ_SEL (1ull << 24)
#define X86_MSR_GS_BASE 0xc0000101 /* the GS segment's base in long mode */
#define X86_MSR_TSC_AUX 0xc0000103
/* The x2APIC registers: KVM's MSR filter never applies to them. */
#define X86_MSR_X2APIC_FIRST 0x800
#define X86_MSR_X2APIC_LAST 0x8ff

#endif /* ARCH_X86_MSR_H */
