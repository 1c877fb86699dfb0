/* SPDX-License-Identifier: MIT */
/*
 * x86 segment descriptors: encoding GDT entries and turning them into the
 * struct kvm_segment that KVM_SET_SREGS wants, so the two never disagree.
 */
#ifndef ARCH_X86_GDT_H
#define ARCH_X86_GDT_H

#include <linux/kvm.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Descriptor flags: high nibble = G, D/B, L, AVL; low byte = access byte. */
#define GDT_FLAGS_CODE32 0xc09b /* 4 KiB granular, 32-bit, present, exec/read, accessed */
#define GDT_FLAGS_DATA32 0xc093 /* 4 KiB granular, 32-bit, present, read/write, accessed */
#define GDT_FLAGS_CODE64 0xa09b /* 4 KiB granular, long mode, present, exec/read, accessed */
#define GDT_FLAGS_TSS32 0x008b	/* byte granular, present, busy 32-bit TSS */

/* Encodes one 8-byte descriptor; limit is the 20-bit field (bits above are
 * ignored, so 0xffffffff and 0xfffff give the same flat descriptor). */
uint64_t gdt_entry(uint16_t flags, uint32_t base, uint32_t limit);

/* Decodes a descriptor at GDT index `index` into KVM's form. KVM wants the
 * limit in bytes, already scaled by the granularity bit. */
struct kvm_segment gdt_to_kvm_segment(uint64_t entry, unsigned index);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_GDT_H */
