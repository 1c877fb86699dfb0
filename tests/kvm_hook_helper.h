/* SPDX-License-Identifier: MIT */
/*
 * C helpers for the KVM probe and code-hook tests (test_kvm_traits.cc):
 * they drive vmm/kvm/ on a real VM, whose headers C++ does not include.
 */
#ifndef TESTS_KVM_HOOK_HELPER_H
#define TESTS_KVM_HOOK_HELPER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct khh_traits {
	int int3_exits, hw_bp_exits, code_hooks, shutdown_keeps_state;
	uint64_t int3_exit_ticks;
	char no_int3[160], no_hw_bp[160], no_code_hooks[160];
};

/* kvm_traits_probe() on the KVM device: 0, or -1 with et_last_error(). */
int khh_get_traits(struct khh_traits *out);

/* Whether a fresh VM of mem_size bytes has all-zero RAM after vm_create()
 * (the probe ran nothing in it): 1, 0, or -1 with et_last_error(). */
int khh_fresh_ram_is_untouched(uint64_t mem_size);

struct khh_hook_run {
	unsigned handler_calls;	 /* the breakpoint's handler ran this often */
	uint64_t handler_rip;	 /* rip as the handler saw it */
	uint64_t hooked_at;	 /* where the hook's bytes went */
	int bytes_restored;	 /* the code is as it was after the run */
	uint32_t eax;		 /* the guest's eax at its end: counts what ran */
	int reached_end;	 /* the guest got to its final port write */
};

/*
 * A 32-bit guest (paging off) whose code is, at `code`:
 *   [nop5 if with_site]  mov eax, 1; inc eax; inc eax; out 0x80, al; hlt
 * with the VM's breakpoints forced to code hooks and slot 0 on the first
 * `inc eax` (or on the nop5 when with_site: the hook goes after it). Runs
 * it to the out to 0x80. 0, or -1 with et_last_error().
 */
int khh_code_hook_run(int with_site, struct khh_hook_run *r);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_KVM_HOOK_HELPER_H */
