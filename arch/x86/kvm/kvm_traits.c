/* SPDX-License-Identifier: MIT */
/*
 * x86's probes of what a KVM reports (vmm/kvm/kvm_traits.h): each runs a
 * few instructions of arch/x86/kvm_probe_guest.h in a scratch VM of one
 * vCPU, without an interrupt controller (HLT exits to us), before any
 * guest runs. Its ioctls go through the core's wrappers
 * (vmm/kvm/arch_ioctl.h), on descriptors it holds in a struct vm and a
 * struct vcpu of its own.
 */
#include "vmm/kvm/arch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/x86/cpu_mode.h"
#include "arch/x86/host_tsc.h"
#include "arch/x86/insn.h"
#include "arch/x86/kvm_probe_guest.h"
#include "arch/x86/layout.h"
#include "earlytrace/abi.h"
#include "vmm/kvm/arch_ioctl.h"
#include "vmm/kvm/kvm_traits.h"
#include "vmm/util/error.h"
#include "vmm/util/sorted.h"

#define TIMED_EXITS 31
#define CPUID_MAX_ENTRIES 256

/* The scratch VM: one vCPU, no interrupt controller (HLT exits to us). */
struct probe_vm {
	struct vm vm;	  /* its descriptors and memory: the core's ioctl wrappers take them */
	struct vcpu vcpu; /* its descriptor */
	struct kvm_run *run;
	size_t run_size;
};

static void probe_close(struct probe_vm *p)
{
	if (p->run)
		munmap(p->run, p->run_size);
	if (p->vcpu.fd >= 0)
		close(p->vcpu.fd);
	if (p->vm.vm_fd >= 0)
		close(p->vm.vm_fd);
	guest_mem_free(&p->vm.mem);
}

static int set_cpuid(struct probe_vm *p)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + CPUID_MAX_ENTRIES * sizeof(c->entries[0]));
	int ret = 0;

	if (!c)
		return et_error("out of memory");
	c->nent = CPUID_MAX_ENTRIES;
	if (kvm_arch_ioctl(&p->vm, KVM_GET_SUPPORTED_CPUID, c) < 0 ||
	    vcpu_arch_ioctl(&p->vcpu, KVM_SET_CPUID2, c) < 0)
		ret = et_error_errno("probing KVM: cannot set the scratch vCPU's CPUID");
	free(c);
	return ret;
}

static int probe_open(int kvm_fd, struct probe_vm *p)
{
	struct kvm_userspace_memory_region slot = { 0 };
	int size;
	void *run;

	memset(p, 0, sizeof(*p));
	p->vm.kvm_fd = kvm_fd;
	p->vm.vm_fd = p->vcpu.fd = -1;
	size = kvm_arch_ioctl(&p->vm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size <= 0)
		return et_error_errno("probing KVM: KVM_GET_VCPU_MMAP_SIZE failed");
	p->vm.vm_fd = kvm_arch_ioctl(&p->vm, KVM_CREATE_VM, 0);
	if (p->vm.vm_fd < 0)
		return et_error_errno("probing KVM: cannot create a scratch VM");
	if (vm_arch_ioctl(&p->vm, KVM_SET_TSS_ADDR, (void *)(unsigned long)LAYOUT_KVM_TSS) < 0)
		return et_error_errno("probing KVM: KVM_SET_TSS_ADDR failed");
	if (guest_mem_init(&p->vm.mem, X86_PROBE_MEM_SIZE))
		return -1;
	slot.memory_size = p->vm.mem.regions[0].size;
	slot.userspace_addr = (uintptr_t)p->vm.mem.regions[0].host;
	if (vm_arch_ioctl(&p->vm, KVM_SET_USER_MEMORY_REGION, &slot) < 0)
		return et_error_errno("probing KVM: cannot map the scratch VM's memory");
	p->vcpu.fd = vm_arch_ioctl(&p->vm, KVM_CREATE_VCPU, 0);
	if (p->vcpu.fd < 0)
		return et_error_errno("probing KVM: cannot create a scratch vCPU");
	run = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, p->vcpu.fd, 0);
	if (run == MAP_FAILED)
		return et_error_errno("probing KVM: cannot map the scratch vCPU's run structure");
	p->run = run;
	p->run_size = (size_t)size;
	return set_cpuid(p);
}

/* Puts test `t` in place, x says where. */
static int probe_start(struct probe_vm *p, enum x86_probe_test t, struct x86_probe *x)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	if (vcpu_arch_ioctl(&p->vcpu, KVM_GET_SREGS, &sregs) < 0)
		return et_error_errno("probing KVM: KVM_GET_SREGS failed");
	if (x86_probe_guest_setup(&p->vm.mem, t, x, &regs, &sregs))
		return -1;
	if (vcpu_arch_ioctl(&p->vcpu, KVM_SET_SREGS, &sregs) < 0 ||
	    vcpu_arch_ioctl(&p->vcpu, KVM_SET_REGS, &regs) < 0)
		return et_error_errno("probing KVM: cannot set the scratch vCPU's registers");
	return 0;
}

static int probe_debug(struct probe_vm *p, const struct kvm_guest_debug *dbg)
{
	if (vcpu_arch_ioctl(&p->vcpu, KVM_SET_GUEST_DEBUG, (void *)dbg) < 0)
		return et_error_errno("probing KVM: KVM_SET_GUEST_DEBUG failed");
	return 0;
}

/* One KVM_RUN. A signal meant for someone else (a timer) interrupts it
 * before the guest ran: run again. */
static int probe_run(struct probe_vm *p)
{
	for (int tries = 0; tries < 100; tries++) {
		p->run->immediate_exit = 0;
		if (vcpu_arch_ioctl(&p->vcpu, KVM_RUN, 0) == 0)
			return 0;
		if (errno != EINTR && errno != EAGAIN)
			break;
	}
	return et_error_errno("probing KVM: KVM_RUN failed");
}

static uint64_t probe_rip(struct probe_vm *p)
{
	struct kvm_regs regs;

	return vcpu_arch_ioctl(&p->vcpu, KVM_GET_REGS, &regs) < 0 ? 0 : regs.rip;
}

/* The exception the guest took itself, or -1 when the exit was not its
 * IDT stub's. */
static int guest_vector(const struct probe_vm *p)
{
	const struct kvm_run *r = p->run;

	if (r->exit_reason != KVM_EXIT_IO || r->io.port != X86_PROBE_VECTOR_PORT ||
	    r->io.direction != KVM_EXIT_IO_OUT)
		return -1;
	return *((const uint8_t *)r + r->io.data_offset);
}

/* The exit, for a sentence: "exit reason 5" or "the guest's own #BP
 * handler ran (vector 3)". */
static void describe_exit(const struct probe_vm *p, char *buf, size_t len)
{
	int v = guest_vector(p);

	if (v >= 0)
		snprintf(buf, len, "it went through the guest's own IDT (vector %d)", v);
	else
		snprintf(buf, len, "KVM_RUN ended with exit reason %u", p->run->exit_reason);
}

/* An int3 exit as the VMM gets it: KVM_EXIT_DEBUG with #BP, or on KVMs
 * that cannot run a guest's int3 an emulation failure at it (the
 * emulation fallback takes those). */
static bool is_int3_exit(struct probe_vm *p, const struct x86_probe *x)
{
	if (p->run->exit_reason == KVM_EXIT_DEBUG)
		return p->run->debug.arch.exception == X86_VECTOR_BP;
	return p->run->exit_reason == KVM_EXIT_INTERNAL_ERROR && probe_rip(p) == x->rip;
}

static int probe_int3(struct probe_vm *p, struct kvm_traits *t)
{
	const struct kvm_guest_debug dbg = {
		.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_SW_BP,
	};
	uint64_t ticks[TIMED_EXITS];
	struct x86_probe x;
	char how[96];

	if (probe_start(p, X86_PROBE_INT3, &x) || probe_debug(p, &dbg) || probe_run(p))
		return -1;
	if (!is_int3_exit(p, &x)) {
		describe_exit(p, how, sizeof(how));
		snprintf(t->no_int3, sizeof(t->no_int3),
			 "this KVM does not report a guest's int3 to the VMM (KVM_GUESTDBG_USE_SW_BP: %s)",
			 how);
		return 0;
	}
	t->int3_exits = true;
	/* The int3 stays where it is: each KVM_RUN ends at it again. */
	for (unsigned i = 0; i < TIMED_EXITS; i++) {
		uint64_t before = host_tsc();

		if (probe_run(p))
			return -1;
		ticks[i] = host_tsc() - before;
		if (!is_int3_exit(p, &x))
			return 0; /* not timed: the overhead figures say so */
	}
	qsort(ticks, TIMED_EXITS, sizeof(ticks[0]), sorted_compare_u64);
	t->int3_exit_ticks = ticks[TIMED_EXITS / 2];
	return 0;
}

static int probe_hw_bp(struct probe_vm *p, struct kvm_traits *t)
{
	struct kvm_guest_debug dbg = {
		.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP,
	};
	struct x86_probe x;
	char how[96];

	if (probe_start(p, X86_PROBE_HW_BP, &x))
		return -1;
	dbg.arch.debugreg[0] = x.bp_addr;
	dbg.arch.debugreg[7] = X86_DR7_GLOBAL(0);
	if (probe_debug(p, &dbg) || probe_run(p))
		return -1;
	if (p->run->exit_reason == KVM_EXIT_DEBUG && p->run->debug.arch.pc == x.bp_addr) {
		t->hw_bp_exits = true;
		return 0;
	}
	if (p->run->exit_reason == KVM_EXIT_HLT)
		snprintf(how, sizeof(how), "the guest ran past it");
	else
		describe_exit(p, how, sizeof(how));
	snprintf(t->no_hw_bp, sizeof(t->no_hw_bp),
		 "this KVM does not report debug-register breakpoints (KVM_GUESTDBG_USE_HW_BP: %s)",
		 how);
	return 0;
}

static bool is_code_hook_exit(const struct probe_vm *p)
{
	const struct kvm_run *r = p->run;

	return r->exit_reason == KVM_EXIT_IO && r->io.port == ET_PORT_CODE_HOOK &&
	       r->io.direction == KVM_EXIT_IO_OUT && r->io.size == 1 && r->io.count == 1;
}

/* A code hook: the out exits; an immediate exit completes it (rip moves
 * past it, as the KVM API says pending I/O completes on the next
 * KVM_RUN); rip put back on it runs it again. */
static int probe_code_hook(struct probe_vm *p, struct kvm_traits *t)
{
	const struct kvm_guest_debug dbg = { 0 };
	struct kvm_regs regs;
	struct x86_probe x;
	const char *why = NULL;
	int r;

	if (probe_start(p, X86_PROBE_CODE_HOOK, &x) || probe_debug(p, &dbg) || probe_run(p))
		return -1;
	if (!is_code_hook_exit(p)) {
		why = "its port I/O did not exit to the VMM";
		goto out;
	}
	p->run->immediate_exit = 1;
	r = vcpu_arch_ioctl(&p->vcpu, KVM_RUN, 0);
	p->run->immediate_exit = 0;
	if (r == 0 || errno != EINTR) {
		why = "an immediate exit did not complete its port I/O";
		goto out;
	}
	if (vcpu_arch_ioctl(&p->vcpu, KVM_GET_REGS, &regs) < 0)
		return et_error_errno("probing KVM: KVM_GET_REGS failed");
	if (regs.rip != x.hook_next) {
		why = "the port I/O did not complete where the next instruction starts";
		goto out;
	}
	regs.rip = x.rip;
	if (vcpu_arch_ioctl(&p->vcpu, KVM_SET_REGS, &regs) < 0)
		return et_error_errno("probing KVM: KVM_SET_REGS failed");
	if (probe_run(p))
		return -1;
	if (!is_code_hook_exit(p)) {
		why = "the instruction did not run again from where rip was put back";
		goto out;
	}
	t->code_hooks = true;
out:
	if (why)
		snprintf(t->no_code_hooks, sizeof(t->no_code_hooks),
			 "this KVM cannot run the VMM's code hooks (%s)", why);
	return 0;
}

/* A triple fault: whether rip still points at the faulting instruction
 * when KVM reports it. */
static int probe_shutdown(struct probe_vm *p, struct kvm_traits *t)
{
	const struct kvm_guest_debug dbg = { 0 };
	struct x86_probe x;

	if (probe_start(p, X86_PROBE_SHUTDOWN, &x) || probe_debug(p, &dbg) || probe_run(p))
		return -1;
	/* Some other end (none known): nothing says the state is gone. */
	t->shutdown_keeps_state =
		p->run->exit_reason != KVM_EXIT_SHUTDOWN || probe_rip(p) == x.fault_rip;
	return 0;
}

int arch_probe_kvm_traits(int kvm_fd, struct kvm_traits *out)
{
	struct probe_vm *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return et_error("out of memory");
	ret = probe_open(kvm_fd, p);
	if (!ret)
		ret = probe_int3(p, out);
	if (!ret)
		ret = probe_hw_bp(p, out);
	if (!ret)
		ret = probe_code_hook(p, out);
	if (!ret)
		ret = probe_shutdown(p, out);
	probe_close(p);
	free(p);
	return ret;
}
