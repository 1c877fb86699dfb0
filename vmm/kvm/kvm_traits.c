/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/kvm_traits.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/x86/cpu_mode.h"
#include "arch/x86/host_tsc.h"
#include "arch/x86/insn.h"
#include "arch/x86/kvm_probe_guest.h"
#include "arch/x86/layout.h"
#include "earlytrace/abi.h"
#include "vmm/util/error.h"
#include "vmm/util/sorted.h"

#define TIMED_EXITS 31
#define CPUID_MAX_ENTRIES 256

/* The scratch VM: one vCPU, no interrupt controller (HLT exits to us). */
struct probe_vm {
	int vm_fd, vcpu_fd;
	struct kvm_run *run;
	size_t run_size;
	struct guest_mem mem;
};

static void probe_close(struct probe_vm *p)
{
	if (p->run)
		munmap(p->run, p->run_size);
	if (p->vcpu_fd >= 0)
		close(p->vcpu_fd);
	if (p->vm_fd >= 0)
		close(p->vm_fd);
	guest_mem_free(&p->mem);
}

static int set_cpuid(int kvm_fd, int vcpu_fd)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + CPUID_MAX_ENTRIES * sizeof(c->entries[0]));
	int ret = 0;

	if (!c)
		return et_error("out of memory");
	c->nent = CPUID_MAX_ENTRIES;
	if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0 || ioctl(vcpu_fd, KVM_SET_CPUID2, c) < 0)
		ret = et_error_errno("probing KVM: cannot set the scratch vCPU's CPUID");
	free(c);
	return ret;
}

static int probe_open(int kvm_fd, struct probe_vm *p)
{
	int size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	struct kvm_userspace_memory_region slot = { 0 };
	void *run;

	memset(p, 0, sizeof(*p));
	p->vm_fd = p->vcpu_fd = -1;
	if (size <= 0)
		return et_error_errno("probing KVM: KVM_GET_VCPU_MMAP_SIZE failed");
	p->vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (p->vm_fd < 0)
		return et_error_errno("probing KVM: cannot create a scratch VM");
	if (ioctl(p->vm_fd, KVM_SET_TSS_ADDR, (unsigned long)LAYOUT_KVM_TSS) < 0)
		return et_error_errno("probing KVM: KVM_SET_TSS_ADDR failed");
	if (guest_mem_init(&p->mem, X86_PROBE_MEM_SIZE))
		return -1;
	slot.memory_size = p->mem.regions[0].size;
	slot.userspace_addr = (uintptr_t)p->mem.regions[0].host;
	if (ioctl(p->vm_fd, KVM_SET_USER_MEMORY_REGION, &slot) < 0)
		return et_error_errno("probing KVM: cannot map the scratch VM's memory");
	p->vcpu_fd = ioctl(p->vm_fd, KVM_CREATE_VCPU, 0);
	if (p->vcpu_fd < 0)
		return et_error_errno("probing KVM: cannot create a scratch vCPU");
	run = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, p->vcpu_fd, 0);
	if (run == MAP_FAILED)
		return et_error_errno("probing KVM: cannot map the scratch vCPU's run structure");
	p->run = run;
	p->run_size = (size_t)size;
	return set_cpuid(kvm_fd, p->vcpu_fd);
}

/* Puts test `t` in place, x says where. */
static int probe_start(struct probe_vm *p, enum x86_probe_test t, struct x86_probe *x)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	if (ioctl(p->vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return et_error_errno("probing KVM: KVM_GET_SREGS failed");
	if (x86_probe_guest_setup(&p->mem, t, x, &regs, &sregs))
		return -1;
	if (ioctl(p->vcpu_fd, KVM_SET_SREGS, &sregs) < 0 ||
	    ioctl(p->vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return et_error_errno("probing KVM: cannot set the scratch vCPU's registers");
	return 0;
}

static int probe_debug(struct probe_vm *p, const struct kvm_guest_debug *dbg)
{
	if (ioctl(p->vcpu_fd, KVM_SET_GUEST_DEBUG, dbg) < 0)
		return et_error_errno("probing KVM: KVM_SET_GUEST_DEBUG failed");
	return 0;
}

/* One KVM_RUN. A signal meant for someone else (a timer) interrupts it
 * before the guest ran: run again. */
static int probe_run(struct probe_vm *p)
{
	for (int tries = 0; tries < 100; tries++) {
		p->run->immediate_exit = 0;
		if (ioctl(p->vcpu_fd, KVM_RUN, 0) == 0)
			return 0;
		if (errno != EINTR && errno != EAGAIN)
			break;
	}
	return et_error_errno("probing KVM: KVM_RUN failed");
}

static uint64_t probe_rip(struct probe_vm *p)
{
	struct kvm_regs regs;

	return ioctl(p->vcpu_fd, KVM_GET_REGS, &regs) < 0 ? 0 : regs.rip;
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
	r = ioctl(p->vcpu_fd, KVM_RUN, 0);
	p->run->immediate_exit = 0;
	if (r == 0 || errno != EINTR) {
		why = "an immediate exit did not complete its port I/O";
		goto out;
	}
	if (ioctl(p->vcpu_fd, KVM_GET_REGS, &regs) < 0)
		return et_error_errno("probing KVM: KVM_GET_REGS failed");
	if (regs.rip != x.hook_next) {
		why = "the port I/O did not complete where the next instruction starts";
		goto out;
	}
	regs.rip = x.rip;
	if (ioctl(p->vcpu_fd, KVM_SET_REGS, &regs) < 0)
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

/* $EARLYTRACE_KVM_TRAITS: what to take away from what the KVM reports. */
static int apply_env(struct kvm_traits *t)
{
	const char *env = getenv(KVM_TRAITS_ENV);
	char buf[128], *save = NULL;

	if (!env || !*env)
		return 0;
	if (strlen(env) >= sizeof(buf))
		return et_error("$%s is too long", KVM_TRAITS_ENV);
	strcpy(buf, env);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "no-int3")) {
			t->int3_exits = false;
			t->int3_exit_ticks = 0;
			snprintf(t->no_int3, sizeof(t->no_int3),
				 "this KVM's int3 exits are not used ($%s=%s)", KVM_TRAITS_ENV, env);
		} else if (!strcmp(w, "no-hw-bp")) {
			t->hw_bp_exits = false;
			snprintf(t->no_hw_bp, sizeof(t->no_hw_bp),
				 "this KVM's debug-register breakpoints are not used ($%s=%s)",
				 KVM_TRAITS_ENV, env);
		} else {
			return et_error("$%s: unknown word '%s' (no-int3, no-hw-bp)", KVM_TRAITS_ENV,
					w);
		}
	}
	return 0;
}

int kvm_traits_probe(int kvm_fd, struct kvm_traits *out)
{
	struct probe_vm p;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = probe_open(kvm_fd, &p);
	if (!ret)
		ret = probe_int3(&p, out);
	if (!ret)
		ret = probe_hw_bp(&p, out);
	if (!ret)
		ret = probe_code_hook(&p, out);
	if (!ret)
		ret = probe_shutdown(&p, out);
	probe_close(&p);
	return ret ? ret : apply_env(out);
}

static pthread_mutex_t traits_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kvm_traits traits;
static bool traits_known;

const struct kvm_traits *kvm_traits_get(int kvm_fd)
{
	const struct kvm_traits *t = &traits;

	pthread_mutex_lock(&traits_lock);
	if (!traits_known) {
		if (kvm_traits_probe(kvm_fd, &traits))
			t = NULL;
		else
			traits_known = true;
	}
	pthread_mutex_unlock(&traits_lock);
	return t;
}
