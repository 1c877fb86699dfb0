/* SPDX-License-Identifier: MIT */
/*
 * Why a run ended. Devices and signal handlers request a stop; the run loop
 * notices it after the current exit and unwinds.
 */
#ifndef VMM_KVM_STOP_H
#define VMM_KVM_STOP_H

#ifdef __cplusplus
extern "C" {
#endif

enum vm_stop_reason {
	VM_STOP_NONE = 0,
	VM_STOP_DEBUG_EXIT,	/* guest wrote the debug-exit port */
	VM_STOP_RESET,		/* guest reset the machine (i8042, reset control
				 * register, BIOS reset vector, reboot=t) */
	VM_STOP_POWER_OFF,	/* guest powered off (a KVM system event) */
	VM_STOP_TIMEOUT,	/* --timeout elapsed */
	VM_STOP_SIGNAL,		/* SIGINT/SIGTERM/SIGHUP on the host */
	VM_STOP_CONSOLE_QUIT,	/* Ctrl-A x typed on the console */
	VM_STOP_GUEST_CRASH,	/* triple fault, failed entry, emulation error */
	VM_STOP_HALTED,		/* HLT with interrupts off: nothing can wake it */
	VM_STOP_VMM_ERROR,	/* an ioctl failed under us */
	VM_STOP_TRACE_DONE,	/* --until reached or --max-events recorded */
	VM_STOP_HANG,		/* --hang-timeout: no new trace event for that long */
	VM_STOP_GUEST_PANIC,	/* the guest kernel finished its panic output
				 * (--on-panic exit) */
};

/* Implemented by the VM; devices hold a pointer to it. detail says how,
 * in a few words that go after the reason's name ("i8042 reset line"): a
 * string that lives as long as the VM, or NULL. */
typedef void (*vm_stop_fn)(void *vm, enum vm_stop_reason reason, int status,
			   const char *detail);

/* Process exit statuses that are not the guest's own. */
#define EXIT_STATUS_ERROR 1	   /* bad input, setup or VMM failure */
#define EXIT_STATUS_GUEST_CRASH 2  /* crash report printed */
#define EXIT_STATUS_GUEST_PANIC 3  /* the guest kernel called panic() */
#define EXIT_STATUS_TIMEOUT 124	   /* as timeout(1) */
#define EXIT_STATUS_SIGNAL_BASE 128 /* + signal number, as a shell reports */

const char *vm_stop_reason_name(enum vm_stop_reason reason);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_STOP_H */
