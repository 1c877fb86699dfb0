/* SPDX-License-Identifier: MIT */
/*
 * What a guest kernel panic does to the run: the machine's panic policy.
 *
 * A hardware breakpoint on panic() sees the kernel enter it: the message
 * is read there (vmm/machine/panic_message.h), the tracer is told (its flight
 * recorder reports), and the run's exit status is 3 however it ends.
 *
 * With --on-panic exit (the default) the run then ends as soon as the
 * kernel has finished its panic output, found by moving the same
 * breakpoint along Linux's panic():
 *  1. console_flush_on_panic() returns: the panic notifiers (with them
 *     ftrace_dump_on_oops), kmsg_dump() and the flush of every buffered
 *     message are done;
 *  2. then panic() itself calls emergency_restart() (panic=-1; panic=N
 *     after "Rebooting in N seconds..") or __const_udelay() (its delay
 *     loops: panic=N, or panic=0 after "---[ end Kernel panic"). Calls of
 *     them from elsewhere (a console driver waiting for its UART) are let
 *     through, with a breakpoint on their return. The run ends there
 *     (RUN_END_GUEST_PANIC).
 * A kernel whose symbols lack console_flush_on_panic ends the run at
 * whatever follows its panic (a reset, a crash, --timeout); one that has
 * it but neither emergency_restart nor __const_udelay ends it at step 1.
 * With --on-panic continue the guest goes on as its panic= says.
 */
#ifndef VMM_PANIC_WATCH_H
#define VMM_PANIC_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/kvm/guest_debug.h"
#include "vmm/machine/panic_message.h"

#ifdef __cplusplus
extern "C" {
#endif

struct machine;

struct panic_watch {
	bool panicked;			 /* panic() was entered */
	char message[PANIC_MESSAGE_MAX]; /* its message; "" when unreadable */
	uint64_t caller;		 /* panic()'s return address; 0: unknown */
	/* Where the breakpoints go; 0 where the kernel has no such symbol. */
	uint64_t panic_fn, flush_fn, restart_fn, udelay_fn;
	/* Per breakpoint slot, during a call from elsewhere: the function to
	 * watch again once it has returned. */
	uint64_t watch_after_return[GUEST_DEBUG_HW_SLOTS];
};

/* Arms the breakpoint on panic() when the symbols name it (else the
 * kernel's panics go unnoticed). 0, or -1 with an error. */
int panic_watch_start(struct machine *m);

#ifdef __cplusplus
}
#endif

#endif /* VMM_PANIC_WATCH_H */
