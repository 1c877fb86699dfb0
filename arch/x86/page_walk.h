/* SPDX-License-Identifier: MIT */
/*
 * Guest-virtual to guest-physical translation through the guest's own page
 * tables, in every x86 paging mode: paging off, 32-bit (with 4 MiB PSE
 * pages and PSE-36), PAE, 4-level and 5-level long mode.
 *
 * The tracer reads the guest stack and guest code at virtual addresses on
 * every event; walking the tables here avoids a KVM_TRANSLATE ioctl per
 * read. The tables are guest memory, hence untrusted: every entry is read
 * through guest_mem_ptr() and the walk has a fixed depth.
 *
 * Accessed/dirty bits are never written and permissions (U/S, R/W, NX) are
 * not checked: the VMM reads on the guest's behalf, not as the guest.
 * Reserved bits are ignored.
 */
#ifndef ARCH_X86_PAGE_WALK_H
#define ARCH_X86_PAGE_WALK_H

#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu_mode.h"
#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entry bits. */
#define X86_PW_P (1ull << 0)
#define X86_PW_PS (1ull << 7)	    /* large page (PDE, or PDPTE in long mode) */
#define X86_PW_NX (1ull << 63)
/* Bits 51:12 of an 8-byte entry: the architectural physical-address field.
 * Masks NX, the protection key (62:59) and the ignored bits above 51. */
#define X86_PW_ADDR_MASK 0x000ffffffffff000ull

/* x86's paging context (arch/arch.h): what the walk needs of a vCPU. */
struct arch_paging {
	uint64_t cr0, cr3, cr4, efer;
};

struct arch_paging arch_paging_of(const struct kvm_sregs *sregs);

/*
 * Translates linear address `va`. On success stores the guest-physical
 * address in *pa and, if page_end is not NULL, the first linear address
 * after the page that maps va (4 KiB granules when paging is off), so a
 * caller can read up to it without translating again; it wraps to 0 at the
 * top of the 64-bit space. Outside long mode linear addresses are 32 bits:
 * va is truncated first. Returns 0, or -1 with et_last_error() saying why.
 */
int arch_translate(const struct guest_mem *gm, const struct arch_paging *pg, uint64_t va,
		  uint64_t *pa, uint64_t *page_end);

/* Copies `len` bytes at linear address `va` into buf, translating each page
 * separately (virtually contiguous pages need not be physically so). */
int arch_read_virt(const struct guest_mem *gm, const struct arch_paging *pg, uint64_t va,
		  void *buf, size_t len);

/* Copies `len` bytes from buf to linear address `va`, the same way. */
int arch_write_virt(const struct guest_mem *gm, const struct arch_paging *pg, uint64_t va,
		   const void *buf, size_t len);

/* The word (4 or 8 bytes, as the code runs) at the top of the guest's
 * stack: the return address when rip is at a function's first
 * instruction. 0, or -1 when the stack is not mapped. */
int arch_read_stack_top(const struct guest_mem *gm, const struct kvm_regs *r,
		       const struct kvm_sregs *s, uint64_t *value);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_PAGE_WALK_H */
