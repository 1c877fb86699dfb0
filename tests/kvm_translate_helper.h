/* SPDX-License-Identifier: MIT */
/*
 * A bare VM for checking the page walker against KVM_TRANSLATE. It lives in
 * C because vmm/kvm/vm.h uses _Atomic, which C++ cannot include; the tests see
 * an opaque handle, the guest RAM and the vCPU's paging registers.
 */
#ifndef TESTS_KVM_TRANSLATE_HELPER_H
#define TESTS_KVM_TRANSLATE_HELPER_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/page_walk.h"
#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

struct kth;

/* A VM with `mem_size` bytes of RAM and one vCPU (cpu model "auto"), or
 * NULL with et_last_error() saying why (no /dev/kvm, ...). */
struct kth *kth_open(uint64_t mem_size);
void kth_close(struct kth *k);

/* The VM's RAM: write page tables here before kth_set_paging(), since KVM
 * loads PAE's PDPTEs when CR3 is set. */
const struct guest_mem *kth_mem(struct kth *k);

/* CPUID features the guest sees (KVM_GET_CPUID2 on the vCPU). */
int kth_has_la57(struct kth *k);
int kth_has_1g_pages(struct kth *k);
int kth_has_rdtscp(struct kth *k);

/*
 * Loads cr0/cr3/cr4/efer from `pg` with KVM_SET_SREGS, the code segment
 * made 64-bit (cs.l) when EFER.LMA is set, 32-bit (cs.db) otherwise, and
 * protected mode on. Then reads the registers back into *actual (what KVM
 * holds, which the walker must be given). 0, or -1 with an error when KVM
 * refused the state.
 */
int kth_set_paging(struct kth *k, const struct arch_paging *pg, struct arch_paging *actual);

/* KVM_TRANSLATE: 0 with *valid and *pa set, or -1 with an error if the
 * ioctl itself failed. */
int kth_translate(struct kth *k, uint64_t va, int *valid, uint64_t *pa);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_KVM_TRANSLATE_HELPER_H */
