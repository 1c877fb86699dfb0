/* SPDX-License-Identifier: MIT */
/*
 * The report printed when a guest dies in a way the VMM cannot continue
 * from: why, the registers, and the instruction at rip decoded (with its
 * symbol when the kernel has symbols).
 */
#ifndef VMM_CRASH_REPORT_H
#define VMM_CRASH_REPORT_H

#include <stdio.h>

#include "vmm/vcpu.h"

void crash_report(struct vcpu *vcpu, const char *what, FILE *out);

#endif /* VMM_CRASH_REPORT_H */
