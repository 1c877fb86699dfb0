/* SPDX-License-Identifier: MIT */
/*
 * The architecture, as code outside arch/ sees it: the one header the
 * KVM core, the tracer, the machine and the commands include for what
 * differs between architectures, as Firecracker's arch/mod.rs re-exports
 * its target's module and Linux's generic code includes <asm/...>. Each
 * architecture's arch.h defines the same names (the ARCH_* constants, the
 * arch_* functions and struct arch_paging) and boots a kernel through the
 * same boot.h and cmdline.h functions; a port to another one writes its
 * own arch/<arch>/arch.h, the files it includes, arch/<arch>/boot/,
 * arch/<arch>/kvm/ (the hooks of vmm/kvm/arch.h), arch/<arch>/hw/ (those
 * of vmm/hw/arch_devices.h) and the hooks vmm/mem/guest_mem.h and
 * vmm/loader/kernel_image.h declare. The loader and guest memory cannot
 * include this header (the boot code it includes includes them).
 */
#ifndef ARCH_ARCH_H
#define ARCH_ARCH_H

#if defined(__x86_64__)
#include "arch/x86/arch.h"
#include "arch/x86/boot/boot.h"	 /* entering a kernel: PVH, Linux 64-bit */
#include "arch/x86/boot/cmdline.h" /* kernel parameters a CPU model needs */
#else
#error "earlytrace runs on x86-64 hosts only (arch/x86/)"
#endif

#endif /* ARCH_ARCH_H */
