/* SPDX-License-Identifier: MIT */
/*
 * Code hooks: the VMM's own execution breakpoints (struct guest_debug's
 * hardware slots) on a KVM that reports no debug-register breakpoints,
 * such as KVM nested under QEMU's TCG (vmm/kvm/kvm_traits.h). A hook is
 * `out ET_PORT_CODE_HOOK, al` written over the first two bytes of the
 * watched instruction: it changes no register, and every KVM sends port
 * I/O to user space. When it exits, the VMM completes the I/O without
 * running the guest on (an immediate exit), puts the instruction's bytes
 * back, moves rip back onto it and calls the breakpoint's handlers; the
 * guest then runs the instruction as it was. A hook fires once: its slot
 * must be cleared or moved before the address can be hooked again (the
 * handler of a hardware breakpoint must move or clear it anyway, or it
 * fires again at once).
 *
 * A breakpoint on a function whose first instruction is a function-entry
 * site (a 5-byte nop or call, which the tracer and the kernel's own ftrace
 * patch and check) is hooked just after the site: nothing in between
 * changes a register or the stack. Hooks never overlap the tracer's sites.
 *
 * Where the guest overwrote a hook before it fired (its own code
 * patching), the VMM counts it and says so when the hook is removed.
 */
#ifndef VMM_KVM_CODE_HOOK_H
#define VMM_KVM_CODE_HOOK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/arch.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vm;
struct vcpu;

/* Room for every slot's hook and for hooks that fired lately: a vCPU may
 * reach one that another vCPU's exit already removed. */
#define CODE_HOOKS_MAX 16

/* Where a breakpoint's virtual address is in guest-physical memory (the
 * kernel image's segments, valid before the guest has paging); false when
 * unknown, and the vCPU's page tables are asked instead. */
typedef bool (*code_hook_translate_fn)(void *ctx, uint64_t vaddr, uint64_t *paddr);

struct code_hook {
	uint64_t addr;	/* the breakpoint's address (linear) */
	uint64_t at;	/* where the hook's bytes are: addr, or past a site there */
	uint64_t paddr; /* guest-physical address of `at` */
	uint8_t orig[ARCH_CODE_HOOK_LEN];
	bool used;	/* addr is wanted by a slot */
	bool armed;	/* the hook's bytes are in guest memory */
};

struct code_hooks {
	bool on; /* this VM's hardware breakpoint slots are code hooks */
	struct code_hook hooks[CODE_HOOKS_MAX];
	/* Where hooks fired lately (`at`), for vCPUs that reach them after. */
	uint64_t fired[CODE_HOOKS_MAX];
	unsigned next_fired;
	code_hook_translate_fn translate;
	void *translate_ctx;
	uint64_t lost; /* hooks the guest overwrote before they fired */
};

/*
 * Makes the hooks the breakpoints addrs[0..n) (0: none) as they are now:
 * a hook for each new address, the hooks of addresses no longer there
 * removed. vcpu is the caller's (its registers translate addresses the
 * translate function does not know). 0, or -1 with an error naming the
 * address that cannot be hooked.
 */
int code_hooks_sync(struct vm *vm, struct vcpu *vcpu, const uint64_t *addrs, unsigned n);

/* Where the hook for breakpoint address addr is, 0 when there is none. */
uint64_t code_hooks_at(const struct vm *vm, uint64_t addr);

/*
 * A KVM_EXIT_IO: if it is one of the hooks (armed, or fired lately), the
 * exit is handled as above and true returned with *at set to where the
 * hook was, whose breakpoints the caller runs; false for any other port
 * access (the guest's own writes to the port included). On a failure to
 * complete the I/O or move rip, true with *fatal set (et_last_error()).
 */
bool code_hook_exit(struct vcpu *vcpu, uint64_t *at, bool *fatal);

/* Removes every hook (the end of the run), saying which the guest had
 * overwritten. */
void code_hooks_remove_all(struct vm *vm);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_CODE_HOOK_H */
