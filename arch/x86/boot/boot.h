/* SPDX-License-Identifier: MIT */
/*
 * Choosing a boot protocol and preparing everything the kernel expects at
 * its first instruction: boot structures in guest memory and the vCPU's
 * register state.
 */
#ifndef ARCH_X86_BOOT_BOOT_H
#define ARCH_X86_BOOT_BOOT_H

#include <linux/kvm.h>
#include <stdint.h>

#include "vmm/loader/kernel_image.h"
#include "vmm/mem/guest_mem.h"
#include "vmm/run/options.h"

#ifdef __cplusplus
extern "C" {
#endif

struct boot_request {
	enum boot_protocol protocol;
	const char *cmdline;
	uint64_t initrd_paddr; /* 0: none */
	uint64_t initrd_size;
	uint64_t acpi_rsdp;    /* 0: no ACPI tables */
};

/* Parses "auto", "pvh" or "linux64". */
int boot_protocol_parse(const char *text, enum boot_protocol *protocol);
const char *boot_protocol_name(enum boot_protocol protocol);

/* Resolves AUTO for this kernel; fails when the kernel cannot be booted
 * with the requested protocol. */
int boot_choose_protocol(const struct kernel_image *img, enum boot_protocol requested,
			 enum boot_protocol *chosen);

/*
 * The longest command line (bytes, without the NUL) the kernel takes,
 * whatever protocol boots it; *source says where the limit comes from.
 * A bzImage says it in its setup header (cmdline_size: 2047 on Debian's);
 * an x86 Linux kernel without one keeps COMMAND_LINE_SIZE - 1 (2047)
 * bytes and cuts the rest without a word; other kernels get what the
 * VMM's layout has room for.
 */
size_t boot_cmdline_max(const struct kernel_image *img, const char **source);

/* The tables firmware leaves a kernel, for nr_cpus vCPUs (x86: ACPI's,
 * arch/x86/boot/acpi.h): the address of their root, which
 * boot_request.acpi_rsdp takes, or 0 with an error. */
uint64_t boot_write_firmware_tables(const struct guest_mem *gm, unsigned nr_cpus);

/* Writes the protocol's structures and fills regs/sregs (sregs should come
 * from KVM_GET_SREGS). req->protocol must be resolved already. */
int boot_prepare(const struct guest_mem *gm, const struct kernel_image *img,
		 const struct boot_request *req, struct kvm_regs *regs, struct kvm_sregs *sregs);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_BOOT_BOOT_H */
