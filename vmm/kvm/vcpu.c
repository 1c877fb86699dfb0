/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/vcpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/arch.h"
#include "vmm/kvm/arch.h"
#include "vmm/util/error.h"
#include "vmm/util/sorted.h"

int vcpu_create(struct vcpu *vcpu, struct vm *vm, unsigned id, const struct cpu_model *model)
{
	void *run;

	memset(vcpu, 0, sizeof(*vcpu));
	vcpu->vm = vm;
	vcpu->id = id;
	if (id >= VM_MAX_VCPUS)
		return et_error("vCPU %u: at most %u vCPUs", id, VM_MAX_VCPUS);
	vcpu->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (vcpu->fd < 0)
		return et_error_errno("KVM_CREATE_VCPU %u failed", id);
	run = mmap(NULL, (size_t)vm->vcpu_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vcpu->fd, 0);
	if (run == MAP_FAILED) {
		et_error_errno("cannot map the vCPU run structure");
		close(vcpu->fd);
		return -1;
	}
	vcpu->run = run;
	vcpu->sync_regs = (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS) &
			   ARCH_KVM_SYNC_ALL) == ARCH_KVM_SYNC_ALL;
	vm->vcpus[id] = vcpu;
	if (vm->nr_vcpus <= id)
		vm->nr_vcpus = id + 1;
	if (arch_vcpu_init(vcpu, model)) {
		vcpu_destroy(vcpu);
		return -1;
	}
	host_wait_enable(vcpu);
	return 0;
}

void vcpu_destroy(struct vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, (size_t)vcpu->vm->vcpu_mmap_size);
	if (vcpu->fd >= 0)
		close(vcpu->fd);
	if (vcpu->vm && vcpu->id < VM_MAX_VCPUS && vcpu->vm->vcpus[vcpu->id] == vcpu)
		vcpu->vm->vcpus[vcpu->id] = NULL;
	vcpu->run = NULL;
	vcpu->fd = -1;
}

void vcpu_observe_exit(struct vcpu *vcpu, const struct et_exit *x)
{
	if (vcpu->observe_exit)
		vcpu->observe_exit(vcpu->observe_exit_ctx, vcpu, x);
}

static _Thread_local struct vcpu *current_vcpu;

struct vcpu *vcpu_current(void)
{
	return current_vcpu;
}

void vcpu_set_current(struct vcpu *vcpu)
{
	current_vcpu = vcpu;
}

void vcpu_kick(struct vcpu *vcpu)
{
	if (vcpu->run)
		vcpu->run->immediate_exit = 1;
}

int vcpu_get_regs(struct vcpu *vcpu, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	if (vcpu->regs_synced) {
		*regs = vcpu->run->s.regs.regs;
		if (sregs)
			*sregs = vcpu->run->s.regs.sregs;
		return 0;
	}
	if (ioctl(vcpu->fd, KVM_GET_REGS, regs) < 0)
		return -1;
	return sregs && ioctl(vcpu->fd, KVM_GET_SREGS, sregs) < 0 ? -1 : 0;
}

int vcpu_get_sregs(struct vcpu *vcpu, struct kvm_sregs *sregs)
{
	if (vcpu->regs_synced) {
		*sregs = vcpu->run->s.regs.sregs;
		return 0;
	}
	return ioctl(vcpu->fd, KVM_GET_SREGS, sregs) < 0 ? -1 : 0;
}

int vcpu_set_regs(struct vcpu *vcpu, const struct kvm_regs *regs)
{
	if (vcpu->regs_synced) {
		vcpu->run->s.regs.regs = *regs;
		vcpu->run->kvm_dirty_regs |= ARCH_KVM_SYNC_GPRS;
		return 0;
	}
	return ioctl(vcpu->fd, KVM_SET_REGS, regs) < 0 ? -1 : 0;
}

struct one_msr {
	struct kvm_msrs hdr;
	struct kvm_msr_entry entry;
};

int vcpu_get_cpuid(struct vcpu *vcpu, struct kvm_cpuid2 *cpuid)
{
	return ioctl(vcpu->fd, KVM_GET_CPUID2, cpuid) < 0 ? -1 : 0;
}

int vcpu_get_msr(struct vcpu *vcpu, uint32_t index, uint64_t *value)
{
	struct one_msr m = { .hdr.nmsrs = 1, .entry.index = index };

	/* Returns how many MSRs it read: 0 for one KVM does not have. */
	if (ioctl(vcpu->fd, KVM_GET_MSRS, &m) != 1)
		return -1;
	*value = m.entry.data;
	return 0;
}

int vcpu_set_msr(struct vcpu *vcpu, uint32_t index, uint64_t value)
{
	struct one_msr m = { .hdr.nmsrs = 1, .entry = { .index = index, .data = value } };

	return ioctl(vcpu->fd, KVM_SET_MSRS, &m) == 1 ? 0 : -1;
}

int vcpu_get_fpu(struct vcpu *vcpu, struct kvm_fpu *fpu)
{
	return ioctl(vcpu->fd, KVM_GET_FPU, fpu) < 0 ? -1 : 0;
}

int vcpu_set_fpu(struct vcpu *vcpu, const struct kvm_fpu *fpu)
{
	return ioctl(vcpu->fd, KVM_SET_FPU, fpu) < 0 ? -1 : 0;
}

int vcpu_inject_exception(struct vcpu *vcpu, unsigned vector, bool has_error_code,
			  uint32_t error_code)
{
	struct kvm_vcpu_events events;

	if (ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &events) < 0)
		return -1;
	events.exception.injected = 1;
	events.exception.nr = (uint8_t)vector;
	events.exception.has_error_code = has_error_code;
	events.exception.error_code = error_code;
	events.flags = 0;
	return ioctl(vcpu->fd, KVM_SET_VCPU_EVENTS, &events) < 0 ? -1 : 0;
}

int vcpu_inject_nmi(struct vcpu *vcpu)
{
	return ioctl(vcpu->fd, KVM_NMI) < 0 ? -1 : 0;
}

bool vcpu_is_halted(struct vcpu *vcpu)
{
	struct kvm_mp_state mp;

	return ioctl(vcpu->fd, KVM_GET_MP_STATE, &mp) == 0 && mp.mp_state == KVM_MP_STATE_HALTED;
}

const char *vcpu_state_name(struct vcpu *vcpu)
{
	struct kvm_mp_state mp;

	if (ioctl(vcpu->fd, KVM_GET_MP_STATE, &mp) < 0)
		return "state unknown";
	switch (mp.mp_state) {
	case KVM_MP_STATE_RUNNABLE:
		return "running";
	case KVM_MP_STATE_HALTED:
		return "halted (HLT), waiting for an interrupt";
	case KVM_MP_STATE_UNINITIALIZED:
		return "waiting for INIT and SIPI (never started by the guest)";
	case KVM_MP_STATE_INIT_RECEIVED:
		return "INIT received, waiting for SIPI";
	case KVM_MP_STATE_SIPI_RECEIVED:
		return "SIPI received";
	default:
		return "state unknown";
	}
}

bool vcpu_has_started(struct vcpu *vcpu)
{
	struct kvm_mp_state mp;

	return ioctl(vcpu->fd, KVM_GET_MP_STATE, &mp) == 0 &&
	       (mp.mp_state == KVM_MP_STATE_RUNNABLE || mp.mp_state == KVM_MP_STATE_HALTED);
}

int vcpu_complete_pending_io(struct vcpu *vcpu)
{
	int kicked = __atomic_exchange_n(&vcpu->run->immediate_exit, 1, __ATOMIC_ACQ_REL);
	int r, err;

	/* Nothing else may reach KVM with it: changed registers would be
	 * loaded before the I/O completes (and rip moved would skip it). */
	vcpu->run->kvm_dirty_regs = 0;
	r = ioctl(vcpu->fd, KVM_RUN, 0);
	err = errno;
	__atomic_store_n(&vcpu->run->immediate_exit, kicked, __ATOMIC_RELEASE);
	vcpu->regs_synced = false;
	if (r == 0) {
		errno = EPROTO; /* the guest ran on: not what the API promises */
		return -1;
	}
	if (err == EINTR)
		return 0;
	errno = err;
	return -1;
}

int vcpu_time_exit_again(struct vcpu *vcpu, const struct kvm_regs *regs, uint64_t *ticks)
{
	uint32_t reason = vcpu->run->exit_reason;
	uint64_t before, after;

	if (arch_regs_interrupts_enabled(regs) || vcpu->run->kvm_dirty_regs)
		return -1;
	/* The resume that follows hands KVM changed registers (rip past the
	 * site): this entry loads them too, unchanged, so it costs what that
	 * one will (measured: 0.15 us more an entry on nested kvm-pvm). */
	if (vcpu->regs_synced)
		vcpu->run->kvm_dirty_regs = ARCH_KVM_SYNC_GPRS;
	before = host_tsc();
	if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
		vcpu->run->kvm_dirty_regs = 0;
		return -1;
	}
	after = host_tsc();
	vcpu->run->kvm_dirty_regs = 0;
	/* A wait in this entry happened before the event the handler is about
	 * to record: said now, at its place. */
	host_wait_note(vcpu, true);
	/* Something ran first after all (an NMI): this is another exit, and
	 * the caller's registers are stale. */
	if (vcpu->run->exit_reason != reason ||
	    (vcpu->regs_synced && arch_regs_ip(&vcpu->run->s.regs.regs) != arch_regs_ip(regs)))
		return -2;
	*ticks = after - before;
	return 0;
}
