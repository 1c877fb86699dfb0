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
#include <stddef.h>

#include "vmm/kvm/guest_mem.h"
#include "vmm/kvm/iobus.h"
#include "vmm/kvm/kvm_device.h"
#include "vmm/kvm/stop.h"

#ifdef __cplusplus
extern "C" {
#endif

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
};

/* Opens KVM, creates the VM with `mem_size` bytes of RAM, the in-kernel
 * IRQ chip and PIT. 0, or -1 with an error that says what to fix. */
int vm_create(struct vm *vm, uint64_t mem_size);
void vm_destroy(struct vm *vm);

/* Async-signal-safe. The first request wins, its detail with it. */
void vm_request_stop(void *vm, enum vm_stop_reason reason, int status);
/* The same with a detail (vm_stop_fn, for devices). */
void vm_request_stop_detail(void *vm, enum vm_stop_reason reason, int status,
			    const char *detail);
enum vm_stop_reason vm_stop_reason(struct vm *vm);
int vm_stop_status(struct vm *vm);
/* The winning request's detail, or NULL. */
const char *vm_stop_detail(struct vm *vm);
/* Replaces the detail once the run is over, when the machine knows more
 * than the device did (which reset path led to the reset register). */
void vm_set_stop_detail(struct vm *vm, const char *detail);
/* The reason's name and its detail: "guest reset (i8042 reset line)". */
const char *vm_stop_describe(struct vm *vm, char *buf, size_t len);

/* Sets an ISA interrupt line on the in-kernel PIC/IOAPIC. */
int vm_set_irq_line(struct vm *vm, unsigned irq, int level);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_VM_H */
