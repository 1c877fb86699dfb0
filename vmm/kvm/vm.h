/* SPDX-License-Identifier: MIT */
/*
 * A KVM virtual machine: the /dev/kvm and VM file descriptors, guest RAM,
 * the in-kernel interrupt controllers and PIT, the I/O bus that devices
 * hang off, and the shared "stop" state that ends a run.
 */
#ifndef VMM_KVM_VM_H
#define VMM_KVM_VM_H

#include <stdbool.h>
#include <stdint.h>

/* C++ tests include this header; std::atomic lays a 64-bit word out as
 * _Atomic does. */
#ifdef __cplusplus
#include <atomic>
typedef std::atomic<uint64_t> vm_stop_word;
typedef std::atomic<uintptr_t> vm_stop_detail_word;
#else
#include <stdatomic.h>
typedef _Atomic uint64_t vm_stop_word;
typedef _Atomic uintptr_t vm_stop_detail_word;
#endif
#include <pthread.h>
#include <stddef.h>

#include "vmm/kvm/code_hook.h"
#include "vmm/kvm/iobus.h"
#include "vmm/kvm/kvm_device.h"
#include "vmm/mem/guest_mem.h"
#include "vmm/run/end.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most vCPUs a VM takes: xAPIC ids are 8 bits and 0xff is broadcast. */
#define VM_MAX_VCPUS 254

struct vcpu;
struct kvm_traits;

struct vm {
	int kvm_fd;
	int vm_fd;
	int vcpu_mmap_size; /* size of each vCPU's struct kvm_run mapping */
	struct guest_mem mem;
	struct iobus bus;
	/* First stop request wins; written from devices, signal handlers and
	 * the console thread, hence one atomic word: reason << 32 | status. */
	vm_stop_word stop;
	vm_stop_detail_word stop_detail; /* const char *: how, set by the winner */
	/* The vCPUs, by id (vcpu_create() registers each). */
	struct vcpu *vcpus[VM_MAX_VCPUS];
	unsigned nr_vcpus;
	/* With several vCPUs, every exit is handled under exit_lock, so the
	 * devices, the console and the tracer see one exit at a time as they
	 * do with one vCPU; one vCPU takes no lock (exit_lock_on false). */
	bool exit_lock_on;
	pthread_mutex_t exit_lock;
#ifdef __cplusplus
	std::atomic<int> vcpus_running; /* threads inside vcpu_run() */
#else
	_Atomic int vcpus_running; /* threads inside vcpu_run() */
#endif
	/* Takes a vCPU out of KVM_RUN from another thread, even from a halt
	 * (the machine's signal); NULL: only the immediate_exit flag. */
	void (*kick)(void *ctx, struct vcpu *vcpu);
	void *kick_ctx;
	/* The vCPUs' steal-time areas (vmm/kvm/host_wait.h); NULL: none. */
	uint8_t *host_wait_page;
	/* What this KVM reports (vmm/kvm/kvm_traits.h); NULL in unit tests
	 * that build a VM by hand, which then get debug exits. */
	const struct kvm_traits *traits;
	/* The VMM's breakpoints as code, where traits has no debug registers. */
	struct code_hooks hooks;
};

/* Opens KVM, creates the VM with `mem_size` bytes of RAM, the in-kernel
 * IRQ chip and PIT. 0, or -1 with an error that says what to fix. */
int vm_create(struct vm *vm, uint64_t mem_size);
void vm_destroy(struct vm *vm);

/* Ends the run (vmm/run/end.h says how each end is named and what status
 * it gives). Async-signal-safe. The first request wins, its detail with it. */
void vm_request_stop(void *vm, enum run_end reason);
/* The same with the end's value and a detail (a run_stop_fn, for devices
 * and signal handlers). */
void vm_request_stop_detail(void *vm, enum run_end reason, int value, const char *detail);
enum run_end vm_stop_reason(struct vm *vm);
/* The winning request's value (the debug-exit status, the signal). */
int vm_stop_value(struct vm *vm);
/* The process exit status the end gives (run_end_status()). */
int vm_stop_status(struct vm *vm);
/* The winning request's detail, or NULL. */
const char *vm_stop_detail(struct vm *vm);
/* Replaces the detail once the run is over, when the machine knows more
 * than the device did (which reset path led to the reset register). */
void vm_set_stop_detail(struct vm *vm, const char *detail);
/* The reason's name and its detail: "guest reset (i8042 reset line)". */
const char *vm_stop_describe(struct vm *vm, char *buf, size_t len);

/* The recommended most vCPUs for a VM on this KVM (KVM_CAP_NR_VCPUS: the
 * host's CPUs), at least 1. */
unsigned vm_recommended_vcpus(struct vm *vm);
/* The most vCPUs this KVM takes (KVM_CAP_MAX_VCPUS, else the recommended
 * number), at most VM_MAX_VCPUS. */
unsigned vm_max_vcpus(struct vm *vm);

/* Makes every vCPU but `except` (NULL: all) leave KVM_RUN soon, from any
 * thread; each notices the stop state or pending work before entering
 * the guest again. */
void vm_kick_others(struct vm *vm, struct vcpu *except);

/* Sets an ISA interrupt line on the in-kernel PIC/IOAPIC. */
int vm_set_irq_line(struct vm *vm, unsigned irq, int level);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_VM_H */
