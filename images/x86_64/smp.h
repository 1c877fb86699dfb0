/* SPDX-License-Identifier: MIT */
/* smp: the test kernel starts its other CPUs (smp.c). */
#ifndef IMAGES_X86_64_SMP_H
#define IMAGES_X86_64_SMP_H

/*
 * Finds the CPUs in the ACPI MADT, starts each other one with
 * INIT-SIPI-SIPI through the local APIC, as Linux does, and has every CPU
 * (this one too) run its per-CPU call tree; then prints, per CPU,
 * "smp cpu=<i> apic=<id> pc_root=<n> pc_leaf=<n>" and
 * "smp cpus=<listed> started=<n>". CPU i calls pc_root once and pc_leaf
 * SMP_LEAVES * (i + 1) times, so a trace shows on which CPU each ran.
 * With smp=crash, CPU 1 then crashes (an invalid opcode without an IDT).
 */
void smp_run(void);

#define SMP_LEAVES 8

#endif
