/* SPDX-License-Identifier: MIT */
/*
 * A virtual CPU: its KVM file descriptor and run structure, its CPUID and
 * boot state, and small accessors (registers, an MSR, the FPU, exception
 * injection, the TSC frequency) so that no code outside vmm/kvm/ issues a
 * KVM ioctl. The run loop is vmm/kvm/run_loop.h.
 */
#ifndef VMM_KVM_VCPU_H
#define VMM_KVM_VCPU_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/kvm/guest_debug.h"
#include "vmm/kvm/host_wait.h"
#include "vmm/kvm/vm.h"

#include "earlytrace/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vcpu;
struct cpu_model; /* the architecture's CPU model (arch/arch.h) */

/* What handling one exit came to (vmm/kvm/run_loop.h). */
enum exit_verdict {
	EXIT_RESUME = 0, /* handled: run the guest on */
	EXIT_STOP,	 /* the VM's stop state is set: the run ends */
	EXIT_FATAL,	 /* the VMM cannot go on; et_last_error() says why */
	EXIT_CRASH,	 /* (arch hook) the guest is dead: the loop reports it */
	EXIT_UNKNOWN,	 /* (arch hook) an exit this architecture does not know */
};

/* Turns a guest address into "symbol+0xoff" for reports; may be NULL. */
typedef const char *(*vcpu_symbolize_fn)(void *ctx, uint64_t addr, char *buf, size_t len);

/* Sees each exit the run loop handled (port I/O, MMIO, MSR, HLT, triple
 * fault), after the device or the MSR emulation did its part, so a read's
 * value is known. The tracer's timeline (vmm/trace/exit_events.c). */
typedef void (*vcpu_exit_observer_fn)(void *ctx, struct vcpu *vcpu, const struct et_exit *x);

/* Exits charged to the tracer: how many, and the host TSC ticks their
 * user-space part took (KVM_RUN returning to the next KVM_RUN). */
struct exit_charge {
	uint64_t exits, ticks;
};

struct vcpu {
	struct vm *vm;
	unsigned id;
	int fd;
	struct kvm_run *run;
	uint64_t nr_exits;
	vcpu_symbolize_fn symbolize;
	void *symbolize_ctx;
	int debug_io; /* log accesses no device claims */
	uint64_t nr_emulation_fallbacks; /* instructions the KVM left to us */
	uint64_t stale_int3; /* (atomic) int3 exits another vCPU's exit had
			      * removed the int3 of: resumed at rip */
	struct guest_debug debug;	 /* breakpoints the VMM placed (the same on every vCPU) */
	int debug_dirty; /* (atomic) debug changed on another thread: apply before KVM_RUN */
	bool sync_regs;	 /* KVM_CAP_SYNC_REGS: registers come with each exit */
	bool regs_synced; /* run->s.regs holds this exit's registers */
	vcpu_exit_observer_fn observe_exit; /* NULL: nobody watches */
	void *observe_exit_ctx;
	const char *crash_reason; /* why the guest crashed, once it has */
	char stop_detail[160];	  /* a stop's detail that names this vCPU */
	/* Work for this vCPU's own thread while the guest is stopped (reading
	 * guest memory the guest must not change meanwhile): another thread
	 * sets work_pending (atomically) and kicks; the run loop calls work_fn
	 * before it enters the guest again. */
	int work_pending;
	void (*work_fn)(void *ctx, struct vcpu *vcpu);
	void *work_ctx;
	/* The guest TSC without a system call: the host's RDTSC plus KVM's
	 * offset for this vCPU, read once (see vcpu_guest_tsc()). */
	int tsc_source; /* 0: not chosen yet, 1: RDTSC + offset, 2: KVM_GET_MSRS */
	uint64_t tsc_offset;
	/* The tracer's own cost, for durations without it: a handler that
	 * sets `charge` has this exit's time in user space, from KVM_RUN's
	 * return (exit_host_tsc) to the next KVM_RUN, added to it. */
	uint64_t exit_host_tsc;
	struct exit_charge *charge;
	/* Host TSC as the current KVM_RUN was entered, and the previous
	 * KVM_RUN's entry and return: where a wait learnt at this exit can
	 * have been (vmm/trace/host_waits.c). */
	uint64_t run_host_tsc, prev_run_host_tsc, prev_exit_host_tsc;
	uint64_t tsc_read_host_tsc; /* host TSC of the last free vcpu_guest_tsc() */
	/* The charge the previous exit went to and its ticks (NULL: none),
	 * so that a wait the next exit learns of, which the thread spent in
	 * that user-space stretch, can come out of the charge again. */
	struct exit_charge *last_charge;
	uint64_t last_charge_ticks;
	/* Host TSC ticks of waits learnt while handling this exit (an extra
	 * KVM_RUN inside the handler): the charge leaves them out. */
	uint64_t stretch_waited_ticks;
	/* How long this thread waited for a host CPU (host_wait.h): after
	 * every KVM_RUN, host_wait_note() calls on_wait, when set, with a
	 * wait it learnt of; during_exit: from inside an exit's handling. */
	struct host_wait wait;
	void (*on_wait)(void *ctx, struct vcpu *vcpu, uint64_t waited_ns, bool during_exit);
	void *on_wait_ctx;
};

int vcpu_create(struct vcpu *vcpu, struct vm *vm, unsigned id, const struct cpu_model *model);
void vcpu_destroy(struct vcpu *vcpu);

/* Loads the boot register state (regs, sregs, FPU, the firmware MSRs);
 * defined by the architecture (arch/x86/kvm/boot_state.c). */
int vcpu_set_boot_state(struct vcpu *vcpu, const struct kvm_regs *regs,
			const struct kvm_sregs *sregs);

/* The firmware MSRs alone: an application processor's, which waits for
 * INIT and SIPI in the state KVM gave it. */
int vcpu_set_firmware_msrs(struct vcpu *vcpu);

/*
 * The registers at the current exit. With KVM_CAP_SYNC_REGS they come in
 * the run structure with the exit, so reading and changing them costs no
 * system call (each register ioctl is microseconds on nested KVMs, and a
 * breakpoint exit needs three); otherwise KVM_GET_REGS/SREGS. sregs may
 * be NULL. 0, or -1 with errno set.
 */
int vcpu_get_regs(struct vcpu *vcpu, struct kvm_regs *regs, struct kvm_sregs *sregs);
/* The segment and control registers alone (before the first run too). */
int vcpu_get_sregs(struct vcpu *vcpu, struct kvm_sregs *sregs);

/* Sets the general registers for the next KVM_RUN (no ioctl with sync
 * regs). 0, or -1 with errno set. */
int vcpu_set_regs(struct vcpu *vcpu, const struct kvm_regs *regs);

/* The vCPU's CPUID as KVM has it (KVM_GET_CPUID2) into cpuid, which has
 * room for cpuid->nent entries. 0, or -1 with errno set. */
int vcpu_get_cpuid(struct vcpu *vcpu, struct kvm_cpuid2 *cpuid);

/* One MSR as the guest sees it: 0, or -1 if KVM has no such MSR. */
int vcpu_get_msr(struct vcpu *vcpu, uint32_t index, uint64_t *value);
/* Sets one MSR: 0, or -1 if KVM refuses the value or has no such MSR. */
int vcpu_set_msr(struct vcpu *vcpu, uint32_t index, uint64_t value);

/*
 * The guest's time stamp counter now, 0 if it cannot be read. Where KVM
 * says the vCPU's TSC offset (KVM_VCPU_TSC_OFFSET) and the guest's TSC
 * is the host's plus that offset (checked once against KVM_GET_MSRS, so
 * no TSC scaling is in play), it is the host's RDTSC plus the offset: no
 * system call, which a breakpoint exit would otherwise pay for every
 * event. Otherwise each call is a KVM_GET_MSRS. The offset is read on
 * the first call: a guest that writes its own TSC later (IA32_TSC,
 * TSC_ADJUST; Linux does not on a clean start) moves KVM's offset, and
 * the VMM's timestamps would then be off by that step.
 */
uint64_t vcpu_guest_tsc(struct vcpu *vcpu); /* arch/x86/kvm/guest_tsc.c */
/* Whether vcpu_guest_tsc() works without a system call. */
bool vcpu_guest_tsc_is_free(struct vcpu *vcpu);

/*
 * Completes the port I/O or MMIO of the exit being handled without
 * running the guest on: KVM_RUN with immediate_exit set, which the KVM
 * API defines to finish pending operations first and then return EINTR
 * (rip is then past the instruction). A kick pending stays pending.
 * Registers read after come from KVM_GET_REGS. 0, or -1 with errno.
 */
int vcpu_complete_pending_io(struct vcpu *vcpu);

/*
 * What a breakpoint exit costs beyond the VMM's user-space work (KVM_RUN
 * entering the guest, the int3, the exit and the return to user space) is
 * timed once per process in a scratch VM (kvm_traits.h); during the run,
 * the handler of a breakpoint exit whose int3 is still in place and whose
 * registers are unchanged times it again: one more KVM_RUN, which ends at
 * the same int3 at once, timed in host TSC ticks (with sync regs, the
 * unchanged registers are handed to KVM as the resume after the handler
 * hands its changed ones, so the entry costs the same).
 * Only with the guest's interrupts off (otherwise an interrupt could run
 * first and end the KVM_RUN with an exit nobody would handle). 0; -1
 * when it was not tried or the guest did not run (nothing changed); -2
 * when the guest ran something else first (an NMI) and the exit is
 * another one, which the caller cannot handle as its own.
 */
int vcpu_time_exit_again(struct vcpu *vcpu, const struct kvm_regs *regs, uint64_t *ticks);
/* The guest TSC's frequency in kHz, 0 when KVM does not say. */
uint64_t vcpu_tsc_khz(struct vcpu *vcpu);

int vcpu_get_fpu(struct vcpu *vcpu, struct kvm_fpu *fpu);
int vcpu_set_fpu(struct vcpu *vcpu, const struct kvm_fpu *fpu);

/* Queues a non-maskable interrupt for the guest (KVM_NMI), delivered
 * through its IDT's vector 2 when it resumes. 0, or -1. */
int vcpu_inject_nmi(struct vcpu *vcpu);

/* Delivers exception `vector` through the guest's IDT when it resumes, as
 * the CPU would (with an error code when has_error_code). 0, or -1. */
int vcpu_inject_exception(struct vcpu *vcpu, unsigned vector, bool has_error_code,
			  uint32_t error_code);

/* Whether the vCPU sits in HLT waiting for an interrupt. */
bool vcpu_is_halted(struct vcpu *vcpu);

/* In words, for reports: "running", "halted (HLT)", "waiting for INIT
 * and SIPI (never started)", ... (KVM_GET_MP_STATE; not while another
 * thread has the vCPU in KVM_RUN). */
const char *vcpu_state_name(struct vcpu *vcpu);
/* Whether the guest started this vCPU (an AP that got its SIPI). */
bool vcpu_has_started(struct vcpu *vcpu);

/* Tells the exit observer, if any, what an exit did. */
void vcpu_observe_exit(struct vcpu *vcpu, const struct et_exit *x);

/* The vCPU whose vcpu_run() this thread is in, or NULL. */
struct vcpu *vcpu_current(void);
/* vcpu_run() marks its thread's vCPU. */
void vcpu_set_current(struct vcpu *vcpu);

/* Makes a KVM_RUN in progress (or the next one) return at once; safe in a
 * signal handler. */
void vcpu_kick(struct vcpu *vcpu);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_VCPU_H */
