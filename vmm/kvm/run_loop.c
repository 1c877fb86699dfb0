/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/run_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/arch.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/host_wait.h"
#include "vmm/util/error.h"

/* An access a device (or nobody) handled. */
static void observe_access(struct vcpu *vcpu, uint16_t kind, uint64_t addr, const uint8_t *data,
			   uint32_t size, bool is_write, bool unclaimed)
{
	struct et_exit x = {
		.kind = kind,
		.addr = addr,
		.size = (uint8_t)size,
		.write = is_write,
		.unclaimed = unclaimed,
		.cpu = vcpu->id,
	};

	if (!vcpu->observe_exit)
		return;
	if (data)
		memcpy(&x.value, data, size < sizeof(x.value) ? size : sizeof(x.value));
	vcpu_observe_exit(vcpu, &x);
}

/* The guest crashed: the crash report, and the end of the run. */
static enum exit_verdict crash(struct vcpu *vcpu, const char *what)
{
	vcpu->crash_reason = what;
	arch_crash_report(vcpu, what, stderr);
	vm_request_stop(vcpu->vm, RUN_END_GUEST_CRASH);
	return EXIT_STOP;
}

static void handle_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;

	/* String instructions (rep outsb, ...) arrive as `count` accesses. */
	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size) {
		bool claimed = iobus_access(&vcpu->vm->bus, IOBUS_PIO, run->io.port, data,
					    run->io.size, is_write);

		if (!claimed && vcpu->debug_io)
			et_warn("unclaimed port %s 0x%04x size %u",
				is_write ? "write" : "read", run->io.port, run->io.size);
		observe_access(vcpu, ET_REC_PIO, run->io.port, data, run->io.size, is_write,
			       !claimed);
	}
}

static void handle_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint32_t len = run->mmio.len <= sizeof(run->mmio.data) ? run->mmio.len : 8;
	bool claimed = iobus_access(&vcpu->vm->bus, IOBUS_MMIO, run->mmio.phys_addr,
				    run->mmio.data, len, run->mmio.is_write);

	if (!claimed && vcpu->debug_io)
		et_warn("unclaimed MMIO %s 0x%llx size %u",
			run->mmio.is_write ? "write" : "read",
			(unsigned long long)run->mmio.phys_addr, len);
	observe_access(vcpu, ET_REC_MMIO, run->mmio.phys_addr, run->mmio.data, len,
		       run->mmio.is_write, !claimed);
}

static enum exit_verdict handle_system_event(struct vcpu *vcpu)
{
	switch (vcpu->run->system_event.type) {
	case KVM_SYSTEM_EVENT_RESET:
		vm_request_stop(vcpu->vm, RUN_END_RESET);
		return EXIT_STOP;
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		vm_request_stop(vcpu->vm, RUN_END_POWER_OFF);
		return EXIT_STOP;
	default:
		return crash(vcpu, "system event (crash)");
	}
}

/* The generic exits; the rest is the architecture's. */
static enum exit_verdict handle(struct vcpu *vcpu)
{
	switch (vcpu->run->exit_reason) {
	case KVM_EXIT_IO: {
		bool fatal;

		/* The VMM's own breakpoint, not the guest's port I/O. */
		if (guest_debug_code_hook_exit(vcpu, &fatal))
			return fatal ? EXIT_FATAL : EXIT_RESUME;
		handle_io(vcpu);
		return EXIT_RESUME;
	}
	case KVM_EXIT_MMIO:
		handle_mmio(vcpu);
		return EXIT_RESUME;
	case KVM_EXIT_INTR:
		return EXIT_RESUME; /* a signal; the stop state says whether to go on */
	case KVM_EXIT_HLT:
		/* Only seen without an in-kernel LAPIC: nothing can wake us. */
		observe_access(vcpu, ET_REC_HLT, 0, NULL, 0, false, false);
		vm_request_stop(vcpu->vm, RUN_END_HALTED);
		return EXIT_STOP;
	case KVM_EXIT_SHUTDOWN:
		observe_access(vcpu, ET_REC_SHUTDOWN, 0, NULL, 0, false, false);
		switch (arch_shutdown_kind(vcpu)) {
		case ARCH_SHUTDOWN_RESET:
			vm_request_stop_detail(vcpu->vm, RUN_END_RESET, 0,
					       "triple fault on an empty IDT");
			return EXIT_STOP;
		case ARCH_SHUTDOWN_STATE_LOST: {
			char on[24] = "";

			if (vcpu->vm->nr_vcpus > 1)
				snprintf(on, sizeof(on), " on vCPU %u", vcpu->id);
			snprintf(vcpu->stop_detail, sizeof(vcpu->stop_detail),
				 "triple fault%s; this KVM reset the vCPU before its state could "
				 "be read, as on AMD SVM",
				 on);
			vm_request_stop_detail(vcpu->vm, RUN_END_RESET, 0, vcpu->stop_detail);
			return EXIT_STOP;
		}
		case ARCH_SHUTDOWN_CRASH:
			break;
		}
		return crash(vcpu, "triple fault (KVM_EXIT_SHUTDOWN)");
	case KVM_EXIT_FAIL_ENTRY:
		return crash(vcpu, "VM entry failed (KVM_EXIT_FAIL_ENTRY)");
	case KVM_EXIT_SYSTEM_EVENT:
		return handle_system_event(vcpu);
	default: {
		const char *why = "unexpected exit";
		enum exit_verdict v = arch_handle_exit(vcpu, &why);

		return v == EXIT_CRASH || v == EXIT_UNKNOWN ? crash(vcpu, why) : v;
	}
	}
}

enum exit_verdict vcpu_dispatch_exit(struct vcpu *vcpu)
{
	enum exit_verdict v = handle(vcpu);

	/* A device, a breakpoint handler or a signal may have asked for the
	 * end while the exit was handled. */
	if (v == EXIT_RESUME && vm_stop_reason(vcpu->vm) != RUN_END_NONE)
		return EXIT_STOP;
	return v;
}

int vcpu_run(struct vcpu *vcpu)
{
	enum exit_verdict v = EXIT_RESUME;
	struct vm *vm = vcpu->vm;
	bool locked = vm->exit_lock_on; /* several vCPUs: exits one at a time */

	vcpu_set_current(vcpu);
	atomic_fetch_add(&vm->vcpus_running, 1);
	if (locked)
		pthread_mutex_lock(&vm->exit_lock);
	while (v == EXIT_RESUME && vm_stop_reason(vm) == RUN_END_NONE) {
		if (__atomic_exchange_n(&vcpu->work_pending, 0, __ATOMIC_ACQ_REL) && vcpu->work_fn) {
			vcpu->regs_synced = false;
			vcpu->work_fn(vcpu->work_ctx, vcpu);
			continue; /* the work may have ended the run */
		}
		/* Another vCPU changed the breakpoints all vCPUs share. */
		if (__atomic_load_n(&vcpu->debug_dirty, __ATOMIC_ACQUIRE) &&
		    guest_debug_apply_pending(vcpu)) {
			v = EXIT_FATAL;
			break;
		}
		if (vcpu->sync_regs)
			vcpu->run->kvm_valid_regs = ARCH_KVM_SYNC_ALL;
		vcpu->regs_synced = false;
		/* One TSC read: the end of this exit's charge and where the
		 * next KVM_RUN starts (vmm/trace/host_waits.c places waits by it). */
		vcpu->prev_run_host_tsc = vcpu->run_host_tsc;
		vcpu->run_host_tsc = host_tsc();
		vcpu->last_charge = vcpu->charge;
		if (vcpu->charge) {
			uint64_t ticks = vcpu->run_host_tsc - vcpu->exit_host_tsc;

			ticks -= ticks > vcpu->stretch_waited_ticks ? vcpu->stretch_waited_ticks : ticks;
			vcpu->last_charge_ticks = ticks;
			vcpu->charge->ticks += ticks;
			vcpu->charge->exits++;
			vcpu->charge = NULL;
		}
		vcpu->stretch_waited_ticks = 0;
		if (locked)
			pthread_mutex_unlock(&vm->exit_lock);
		int r = ioctl(vcpu->fd, KVM_RUN, 0);
		int err = errno;
		if (locked)
			pthread_mutex_lock(&vm->exit_lock);
		if (r < 0) {
			/* EAGAIN: an AP's INIT was taken (KVM_RUN returns it once
			 * as the vCPU leaves its wait for INIT/SIPI). */
			if (err == EINTR || err == EAGAIN) {
				vcpu->run->immediate_exit = 0;
				continue;
			}
			errno = err;
			et_error_errno("KVM_RUN failed on vCPU %u", vcpu->id);
			v = EXIT_FATAL;
			break;
		}
		vcpu->prev_exit_host_tsc = vcpu->exit_host_tsc;
		vcpu->exit_host_tsc = host_tsc();
		vcpu->nr_exits++;
		host_wait_note(vcpu, false);
		vcpu->regs_synced = vcpu->sync_regs;
		v = vcpu_dispatch_exit(vcpu);
	}
	if (locked)
		pthread_mutex_unlock(&vm->exit_lock);
	atomic_fetch_sub(&vm->vcpus_running, 1);
	vcpu_set_current(NULL);
	if (v != EXIT_FATAL)
		return 0;
	vm_request_stop(vm, RUN_END_VMM_ERROR);
	return -1;
}
