/* SPDX-License-Identifier: MIT */
#include "vmm/machine/panic_watch.h"

#include "arch/arch.h"
#include "vmm/machine/machine.h"

static void on_flush_call(void *ctx, struct vcpu *vcpu, unsigned slot);
static void on_flush_return(void *ctx, struct vcpu *vcpu, unsigned slot);
static void on_final_call(void *ctx, struct vcpu *vcpu, unsigned slot);
static void on_return_from_elsewhere(void *ctx, struct vcpu *vcpu, unsigned slot);

/* Moves a breakpoint; a failure ends the run (the VMM lost track). */
static void arm(struct machine *m, unsigned slot, uint64_t addr, guest_debug_hw_fn fn)
{
	if (guest_debug_set_hw(&m->vcpu, slot, addr, fn, m))
		vm_request_stop(&m->vm, RUN_END_VMM_ERROR);
}

/* The return address at a function's first instruction; 0 if unreadable. */
static uint64_t return_address(struct vcpu *vcpu)
{
	struct kvm_regs r;
	struct kvm_sregs s;
	uint64_t ret = 0;

	if (vcpu_get_regs(vcpu, &r, &s) < 0 ||
	    arch_read_stack_top(&vcpu->vm->mem, &r, &s, &ret))
		return 0;
	return ret;
}

/* Whether the call that pushed return address `ret` is in panic(): its
 * last byte is, even when a noreturn call ends the function. */
static bool called_from_panic(const struct machine *m, uint64_t ret)
{
	uint64_t off;
	const struct symbol *s = symtab_lookup(&m->symbols.tab, ret - 1, &off);

	return s && s->addr == m->panic.panic_fn;
}

/* The kernel has said all it will say: the run ends. */
static void output_done(struct machine *m)
{
	arm(m, MACHINE_HW_BP_PANIC, 0, NULL);
	arm(m, MACHINE_HW_BP_PANIC_END, 0, NULL);
	vm_request_stop(&m->vm, RUN_END_GUEST_PANIC);
}

static void on_panic(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct machine *m = ctx;
	struct panic_watch *pw = &m->panic;

	pw->panicked = true;
	pw->caller = return_address(vcpu);
	panic_message_read(vcpu, pw->message, sizeof(pw->message));
	if (m->panic_hook)
		m->panic_hook(m->panic_hook_ctx, vcpu);
	if (m->opts->on_panic == PANIC_ACTION_EXIT && pw->flush_fn)
		arm(m, slot, pw->flush_fn, on_flush_call);
	else
		arm(m, slot, 0, NULL); /* the guest reboots or waits as it was told */
}

static void on_flush_call(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct machine *m = ctx;
	uint64_t ret = return_address(vcpu);

	if (ret)
		arm(m, slot, ret, on_flush_return);
	else
		output_done(m);
}

static void on_flush_return(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct machine *m = ctx;
	struct panic_watch *pw = &m->panic;

	(void)vcpu;
	(void)slot;
	if (!pw->restart_fn && !pw->udelay_fn) {
		output_done(m);
		return;
	}
	arm(m, MACHINE_HW_BP_PANIC, pw->restart_fn, on_final_call);
	arm(m, MACHINE_HW_BP_PANIC_END, pw->udelay_fn, on_final_call);
}

/* emergency_restart() or __const_udelay() called: from panic() it is the
 * end of the output; from elsewhere, watch for the function again once
 * this call has returned. */
static void on_final_call(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct machine *m = ctx;
	uint64_t ret = return_address(vcpu);

	if (!ret || called_from_panic(m, ret)) {
		output_done(m);
		return;
	}
	m->panic.watch_after_return[slot] = m->vcpu.debug.hw_addr[slot];
	arm(m, slot, ret, on_return_from_elsewhere);
}

static void on_return_from_elsewhere(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct machine *m = ctx;

	(void)vcpu;
	arm(m, slot, m->panic.watch_after_return[slot], on_final_call);
}

int panic_watch_start(struct machine *m)
{
	struct panic_watch *pw = &m->panic;

	if (symbols_addr(&m->symbols, "panic", &pw->panic_fn))
		return 0;
	/* Absent symbols stay 0: the steps they serve are skipped. */
	symbols_addr(&m->symbols, "console_flush_on_panic", &pw->flush_fn);
	symbols_addr(&m->symbols, "emergency_restart", &pw->restart_fn);
	symbols_addr(&m->symbols, "__const_udelay", &pw->udelay_fn);
	return guest_debug_set_hw(&m->vcpu, MACHINE_HW_BP_PANIC, pw->panic_fn, on_panic, m);
}
