/* SPDX-License-Identifier: MIT */
/*
 * The BIOS reset vector (LAYOUT_RESET_VECTOR, F000:FFF0). A kernel that
 * restarts "through the BIOS" leaves long mode, enters real mode and jumps
 * there, expecting firmware to reset the machine: Linux does so with
 * reboot=b, and by default on earlytrace's hardware-reduced ACPI machine
 * (it picks EFI there, and without EFI falls back to the BIOS). earlytrace
 * has no firmware; it puts ten bytes of real-mode code at the vector that
 * write the reset value to the reset control register
 * (vmm/hw/reset_control.c), so this path ends the run like the others.
 */
#ifndef ARCH_X86_KVM_RESET_VECTOR_H
#define ARCH_X86_KVM_RESET_VECTOR_H

#include <stdbool.h>

#include "vmm/kvm/vcpu.h"
#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the code at the reset vector. 0, or -1 with an error. */
int reset_vector_install(const struct guest_mem *gm);

/* Whether the vCPU is running the reset vector's code: real mode, CS at
 * segment 0xf000, IP in its 16 bytes. Tells a reset through the BIOS
 * from one a kernel wrote to the reset control register itself. */
bool reset_vector_is_running(struct vcpu *vcpu);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_KVM_RESET_VECTOR_H */
