/* SPDX-License-Identifier: MIT */
/*
 * How a run ends: every way, its name and the process exit status it
 * gives, in one table (end.c). Whoever ends a run (a device, the run loop,
 * a signal, the tracer) says only which way and, for the two ends that
 * carry one, a value; the status follows from the table, as Firecracker's
 * FcExitCode is decided at the top and its vCPUs only say they stopped.
 * A new way to end a run is one enum entry and one table row.
 */
#ifndef VMM_RUN_END_H
#define VMM_RUN_END_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum run_end {
	RUN_END_NONE = 0,	/* still running */
	RUN_END_DEBUG_EXIT,	/* guest wrote the debug-exit port (value: its status) */
	RUN_END_RESET,		/* guest reset the machine (i8042, reset control
				 * register, BIOS reset vector, reboot=t) */
	RUN_END_POWER_OFF,	/* guest powered off (ACPI S5, a KVM system event) */
	RUN_END_TIMEOUT,	/* --timeout elapsed */
	RUN_END_SIGNAL,		/* SIGINT/SIGTERM/SIGHUP on the host (value: the signal) */
	RUN_END_CONSOLE_QUIT,	/* Ctrl-A x typed on the console */
	RUN_END_GUEST_CRASH,	/* triple fault, failed entry, emulation error */
	RUN_END_HALTED,		/* HLT with interrupts off: nothing can wake it */
	RUN_END_VMM_ERROR,	/* an ioctl failed under us */
	RUN_END_TRACE_DONE,	/* --until reached or --max-events recorded */
	RUN_END_HANG,		/* --hang-timeout: no new trace event for that long */
	RUN_END_GUEST_PANIC,	/* the guest kernel finished its panic output
				 * (--on-panic exit) */
	RUN_END_COUNT
};

/* Process exit statuses that are not the guest's own (docs/usage.md). */
#define EXIT_STATUS_ERROR 1	   /* bad input, setup or VMM failure */
#define EXIT_STATUS_GUEST_CRASH 2  /* crash report printed */
#define EXIT_STATUS_GUEST_PANIC 3  /* the guest kernel called panic() */
#define EXIT_STATUS_TIMEOUT 124	   /* as timeout(1) */
#define EXIT_STATUS_SIGNAL_BASE 128 /* + signal number, as a shell reports */

/* How a device or a handler ends the run: `ctx` is the VM's, `value` only
 * counts for RUN_END_DEBUG_EXIT and RUN_END_SIGNAL, and `detail` says how
 * in a few words after the end's name ("i8042 reset line"): a string that
 * lives as long as the VM, or NULL. */
typedef void (*run_stop_fn)(void *ctx, enum run_end end, int value, const char *detail);

/* The end's name, as messages and the trace file's END record say it. */
const char *run_end_name(enum run_end end);
/* The process exit status a run that ended so gives. */
int run_end_status(enum run_end end, int value);
/* "name (detail)", or the name alone, into buf. Returns buf. */
const char *run_end_describe(enum run_end end, const char *detail, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VMM_RUN_END_H */
