/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/guest_debug.h"

#include <sys/ioctl.h>

#include "arch/arch.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/kvm_traits.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/util/error.h"

static int apply(struct vcpu *vcpu)
{
	struct guest_debug *d = &vcpu->debug;
	struct kvm_guest_debug dbg = { 0 };
	/* Where code hooks stand in for the debug registers, KVM gets none. */
	bool hooks = vcpu->vm && vcpu->vm->hooks.on;

	for (unsigned i = 0; i < GUEST_DEBUG_HW_SLOTS; i++) {
		if (!d->hw_addr[i] || hooks)
			continue;
		dbg.control |= KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP;
		arch_guest_debug_set_hw(&dbg, i, d->hw_addr[i]);
	}
	if (d->int3_fn)
		dbg.control |= KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_SW_BP;
	if (ioctl(vcpu->fd, KVM_SET_GUEST_DEBUG, &dbg) < 0)
		return et_error_errno("KVM_SET_GUEST_DEBUG failed");
	return 0;
}

int guest_debug_apply_pending(struct vcpu *vcpu)
{
	__atomic_store_n(&vcpu->debug_dirty, 0, __ATOMIC_RELEASE);
	return apply(vcpu);
}

/*
 * vcpu's settings to every vCPU of its VM. A vCPU ioctl waits for a
 * KVM_RUN in progress to end (a halted vCPU's may never), so only the
 * calling thread's own vCPU, or any vCPU before or after the run, gets
 * them at once; the others are kicked and apply them in their own
 * threads. With several vCPUs every exit is handled under the VM's exit
 * lock, so no other vCPU reads its copy meanwhile.
 */
static int share(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	bool others = false;
	int ret = 0;

	if (!vm || !vm->nr_vcpus)
		return apply(vcpu);
	for (unsigned i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = vm->vcpus[i];

		if (!v)
			continue;
		v->debug = vcpu->debug;
		if (v == vcpu_current() || !atomic_load(&vm->vcpus_running)) {
			if (apply(v))
				ret = -1;
		} else {
			__atomic_store_n(&v->debug_dirty, 1, __ATOMIC_RELEASE);
			others = true;
		}
	}
	if (others)
		vm_kick_others(vm, vcpu_current());
	return ret;
}

int guest_debug_set_hw(struct vcpu *vcpu, unsigned slot, uint64_t addr, guest_debug_hw_fn fn,
		       void *ctx)
{
	struct guest_debug *d = &vcpu->debug;
	struct vm *vm = vcpu->vm;

	if (slot >= GUEST_DEBUG_HW_SLOTS)
		return et_error("no hardware breakpoint slot %u", slot);
	if (addr && vm && vm->hooks.on && vm->traits && !vm->traits->code_hooks)
		return et_error("cannot place a breakpoint: %s, and %s", vm->traits->no_hw_bp,
				vm->traits->no_code_hooks);
	d->hw_addr[slot] = addr;
	d->hw_fn[slot] = addr ? fn : NULL;
	d->hw_ctx[slot] = addr ? ctx : NULL;
	if (vm && vm->hooks.on && code_hooks_sync(vm, vcpu, d->hw_addr, GUEST_DEBUG_HW_SLOTS)) {
		d->hw_addr[slot] = 0;
		d->hw_fn[slot] = NULL;
		d->hw_ctx[slot] = NULL;
		share(vcpu);
		return -1;
	}
	return share(vcpu);
}

int guest_debug_set_int3(struct vcpu *vcpu, guest_debug_int3_fn fn, void *ctx)
{
	vcpu->debug.int3_fn = fn;
	vcpu->debug.int3_ctx = ctx;
	return share(vcpu);
}

/* With several vCPUs, another one may have put a site's own bytes back
 * (--oneshot's first call, the handoff, the end of capture) between this
 * vCPU's int3 and its exit being handled, which waited for the exit lock
 * meanwhile: then there is no int3 at rip any more, and the guest goes on
 * there, running the instruction now in place, as after Linux's
 * text_poke_bp(). */
static bool int3_gone(struct vcpu *vcpu, const struct kvm_regs *regs,
		      const struct kvm_sregs *sregs)
{
	struct arch_paging pg = arch_paging_of(sregs);
	uint8_t b;

	return vcpu->vm && vcpu->vm->nr_vcpus > 1 &&
	       arch_read_virt(&vcpu->vm->mem, &pg, arch_code_address(sregs, regs),
			     &b, 1) == 0 &&
	       b != ARCH_BREAKPOINT_INSN;
}

bool guest_debug_int3(struct vcpu *vcpu, struct kvm_regs *regs, const struct kvm_sregs *sregs)
{
	struct guest_debug *d = &vcpu->debug;

	/* Before any handler: a stale exit is nobody's breakpoint (a handler
	 * would count the call twice, or time the exit by running the guest
	 * on from rip). */
	if (int3_gone(vcpu, regs, sregs)) {
		__atomic_fetch_add(&vcpu->stale_int3, 1, __ATOMIC_RELAXED);
		return true;
	}
	if (d->int3_fn && d->int3_fn(d->int3_ctx, vcpu, regs, sregs))
		return true;
	return arch_deliver_int3(vcpu, regs);
}

bool guest_debug_handle_exit(struct vcpu *vcpu)
{
	const struct kvm_debug_exit_arch *arch = &vcpu->run->debug.arch;
	struct guest_debug *d = &vcpu->debug;

	if (arch_debug_exit_is_int3(arch)) {
		struct kvm_regs regs;
		struct kvm_sregs sregs;

		if (vcpu_get_regs(vcpu, &regs, &sregs) < 0)
			return false;
		return guest_debug_int3(vcpu, &regs, &sregs);
	}
	/* Several slots may watch one address (say --until at the handoff
	 * symbol): run every matching handler. Some KVMs leave DR6 empty, so
	 * match on the address too. */
	unsigned hit = 0;
	for (unsigned i = 0; i < GUEST_DEBUG_HW_SLOTS; i++) {
		if (!d->hw_addr[i] || !arch_debug_exit_hit(arch, i, d->hw_addr[i]))
			continue;
		hit++;
		if (d->hw_fn[i])
			d->hw_fn[i](d->hw_ctx[i], vcpu, i);
	}
	return hit > 0;
}

bool guest_debug_code_hook_exit(struct vcpu *vcpu, bool *fatal)
{
	struct guest_debug *d = &vcpu->debug;
	bool hit[GUEST_DEBUG_HW_SLOTS] = { false };
	uint64_t at;

	*fatal = false;
	if (!vcpu->vm || !code_hook_exit(vcpu, &at, fatal))
		return false;
	if (*fatal)
		return true;
	/* Which slots watch it, before any handler moves one. */
	for (unsigned i = 0; i < GUEST_DEBUG_HW_SLOTS; i++)
		hit[i] = d->hw_addr[i] && code_hooks_at(vcpu->vm, d->hw_addr[i]) == at;
	for (unsigned i = 0; i < GUEST_DEBUG_HW_SLOTS; i++)
		if (hit[i] && d->hw_fn[i])
			d->hw_fn[i](d->hw_ctx[i], vcpu, i);
	return true;
}
