/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/code_hook.h"

#include <inttypes.h>
#include <string.h>

#include "arch/arch.h"
#include "earlytrace/abi.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/util/error.h"

static const uint8_t *hook_bytes(void)
{
	static uint8_t bytes[ARCH_CODE_HOOK_LEN];

	arch_encode_code_hook(bytes, ET_PORT_CODE_HOOK);
	return bytes;
}

/* The guest-physical address of linear address va: the machine's map
 * first (the kernel's own addresses, before the guest maps them), then
 * the vCPU's page tables. */
static int translate(struct vm *vm, struct vcpu *vcpu, uint64_t va, uint64_t *pa)
{
	struct code_hooks *ch = &vm->hooks;
	struct kvm_sregs sregs;
	struct arch_paging pg;

	if (ch->translate && ch->translate(ch->translate_ctx, va, pa))
		return 0;
	if (!vcpu || vcpu_get_sregs(vcpu, &sregs) < 0)
		return -1;
	pg = arch_paging_of(&sregs);
	return arch_translate(&vm->mem, &pg, va, pa, NULL);
}

static struct code_hook *find_addr(struct code_hooks *ch, uint64_t addr)
{
	for (unsigned i = 0; i < CODE_HOOKS_MAX; i++)
		if (ch->hooks[i].used && ch->hooks[i].addr == addr)
			return &ch->hooks[i];
	return NULL;
}

/* Another hook whose bytes are at `at` already (two breakpoints on one
 * instruction share them). */
static struct code_hook *armed_at(struct code_hooks *ch, uint64_t at, const struct code_hook *not)
{
	for (unsigned i = 0; i < CODE_HOOKS_MAX; i++) {
		struct code_hook *h = &ch->hooks[i];

		if (h != not && h->used && h->armed && h->at == at)
			return h;
	}
	return NULL;
}

/* Takes the hook's bytes out of guest memory, unless another hook shares
 * them; a hook the guest overwrote is counted and named. */
static void disarm(struct vm *vm, struct code_hook *h)
{
	struct code_hooks *ch = &vm->hooks;
	uint8_t *code = guest_mem_ptr(&vm->mem, h->paddr, ARCH_CODE_HOOK_LEN);

	if (!h->armed)
		return;
	h->armed = false;
	if (armed_at(ch, h->at, h))
		return;
	if (code && !memcmp(code, hook_bytes(), ARCH_CODE_HOOK_LEN)) {
		memcpy(code, h->orig, ARCH_CODE_HOOK_LEN);
		return;
	}
	ch->lost++;
	et_warn("the guest overwrote the VMM's breakpoint at 0x%" PRIx64
		" (a code hook) before it fired; it never did",
		h->addr);
}

static int arm(struct vm *vm, struct vcpu *vcpu, struct code_hook *h)
{
	struct code_hooks *ch = &vm->hooks;
	const struct code_hook *twin;
	uint8_t site[ARCH_SITE_LEN] = { 0 };
	uint64_t pa;
	uint8_t *code;

	if (translate(vm, vcpu, h->addr, &pa))
		return et_error("cannot place a breakpoint at 0x%" PRIx64
				": it is not in guest memory",
				h->addr);
	code = guest_mem_ptr(&vm->mem, pa, ARCH_SITE_LEN);
	if (code)
		memcpy(site, code, ARCH_SITE_LEN);
	h->at = h->addr + arch_code_hook_offset(site);
	if (h->at != h->addr && translate(vm, vcpu, h->at, &pa))
		return et_error("cannot place a breakpoint at 0x%" PRIx64
				": it is not in guest memory",
				h->at);
	h->paddr = pa;
	code = guest_mem_ptr(&vm->mem, pa, ARCH_CODE_HOOK_LEN);
	if (!code)
		return et_error("cannot place a breakpoint at 0x%" PRIx64
				": it is not in guest memory",
				h->at);
	twin = armed_at(ch, h->at, h);
	if (twin) {
		memcpy(h->orig, twin->orig, ARCH_CODE_HOOK_LEN);
	} else {
		memcpy(h->orig, code, ARCH_CODE_HOOK_LEN);
		memcpy(code, hook_bytes(), ARCH_CODE_HOOK_LEN);
	}
	h->armed = true;
	return 0;
}

int code_hooks_sync(struct vm *vm, struct vcpu *vcpu, const uint64_t *addrs, unsigned n)
{
	struct code_hooks *ch = &vm->hooks;
	int ret = 0;

	/* Hooks no breakpoint wants any more go first: their slots may be
	 * what the new addresses need. */
	for (unsigned i = 0; i < CODE_HOOKS_MAX; i++) {
		struct code_hook *h = &ch->hooks[i];
		bool wanted = false;

		for (unsigned j = 0; j < n && h->used; j++)
			wanted |= addrs[j] == h->addr;
		if (h->used && !wanted) {
			disarm(vm, h);
			h->used = false;
		}
	}
	for (unsigned j = 0; j < n; j++) {
		struct code_hook *h;

		if (!addrs[j])
			continue;
		/* Armed, or fired: a hook fires once, and comes back only
		 * once its slot has been cleared or moved in between. */
		if (find_addr(ch, addrs[j]))
			continue;
		h = NULL;
		for (unsigned i = 0; i < CODE_HOOKS_MAX && !h; i++)
			if (!ch->hooks[i].used)
				h = &ch->hooks[i];
		if (!h)
			return et_error("more than %d code hooks", CODE_HOOKS_MAX);
		*h = (struct code_hook){ .addr = addrs[j], .used = true };
		if (arm(vm, vcpu, h)) {
			h->used = false;
			ret = -1;
		}
	}
	return ret;
}

uint64_t code_hooks_at(const struct vm *vm, uint64_t addr)
{
	const struct code_hooks *ch = &vm->hooks;

	for (unsigned i = 0; i < CODE_HOOKS_MAX; i++)
		if (ch->hooks[i].used && ch->hooks[i].addr == addr)
			return ch->hooks[i].at;
	return 0;
}

/* The hook a vCPU stopped at, linear address `ip` (on the out, or past
 * it on KVMs that advance rip before the exit): an armed one, or where
 * one fired lately. */
static bool hook_at(struct code_hooks *ch, uint64_t ip, uint64_t *at)
{
	for (unsigned i = 0; i < CODE_HOOKS_MAX; i++) {
		const struct code_hook *h = &ch->hooks[i];

		if (h->used && h->armed && (h->at == ip || h->at + ARCH_CODE_HOOK_LEN == ip)) {
			*at = h->at;
			return true;
		}
	}
	for (unsigned i = 0; i < CODE_HOOKS_MAX; i++) {
		uint64_t f = ch->fired[i];

		if (f && (f == ip || f + ARCH_CODE_HOOK_LEN == ip)) {
			*at = f;
			return true;
		}
	}
	return false;
}

bool code_hook_exit(struct vcpu *vcpu, uint64_t *at, bool *fatal)
{
	const struct kvm_run *run = vcpu->run;
	struct vm *vm = vcpu->vm;
	struct code_hooks *ch = &vm->hooks;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	uint64_t linear;

	*fatal = false;
	if (!ch->on || run->io.port != ET_PORT_CODE_HOOK || run->io.direction != KVM_EXIT_IO_OUT ||
	    run->io.size != 1 || run->io.count != 1)
		return false;
	if (vcpu_get_regs(vcpu, &regs, &sregs) < 0)
		return false;
	linear = arch_code_address(&sregs, &regs);
	if (!hook_at(ch, linear, at))
		return false; /* the guest's own write to the port */
	/* The out completes first (rip past it); only then may rip move. */
	if (vcpu_complete_pending_io(vcpu) < 0 || vcpu_get_regs(vcpu, &regs, &sregs) < 0) {
		et_error_errno("a code hook's port I/O could not be completed");
		*fatal = true;
		return true;
	}
	linear = arch_code_address(&sregs, &regs);
	if (linear != *at + ARCH_CODE_HOOK_LEN) {
		et_error("a code hook at 0x%" PRIx64 " completed with rip at 0x%" PRIx64, *at,
			 linear);
		*fatal = true;
		return true;
	}
	for (unsigned i = 0; i < CODE_HOOKS_MAX; i++) {
		struct code_hook *h = &ch->hooks[i];

		if (h->used && h->armed && h->at == *at) {
			disarm(vm, h);
			ch->fired[ch->next_fired++ % CODE_HOOKS_MAX] = *at;
		}
	}
	arch_regs_set_ip(&regs, arch_regs_ip(&regs) - ARCH_CODE_HOOK_LEN);
	if (vcpu_set_regs(vcpu, &regs) < 0) {
		et_error_errno("cannot move rip back over a code hook");
		*fatal = true;
	}
	return true;
}

void code_hooks_remove_all(struct vm *vm)
{
	for (unsigned i = 0; i < CODE_HOOKS_MAX; i++) {
		struct code_hook *h = &vm->hooks.hooks[i];

		if (h->used)
			disarm(vm, h);
		h->used = false;
	}
}
