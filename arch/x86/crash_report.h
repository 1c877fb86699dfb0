/* SPDX-License-Identifier: MIT */
/*
 * The report printed when a guest dies in a way the VMM cannot continue
 * from: why, the registers, and the instruction at rip decoded (with its
 * symbol when the kernel has symbols).
 */
#ifndef ARCH_X86_CRASH_REPORT_H
#define ARCH_X86_CRASH_REPORT_H

#include <stdio.h>

#include "vmm/kvm/vcpu.h"

void crash_report(struct vcpu *vcpu, const char *what, FILE *out);

/* Just the registers and the decoded instruction at rip (for reports of
 * a guest that is not dead: a panic, a hang). */
void crash_report_state(struct vcpu *vcpu, FILE *out);

#endif /* ARCH_X86_CRASH_REPORT_H */
