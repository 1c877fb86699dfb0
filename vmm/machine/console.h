/* SPDX-License-Identifier: MIT */
/*
 * The host side of the guest console: when stdin is a terminal, a thread
 * puts it in raw mode and feeds keystrokes to the UART. Ctrl-A is the
 * escape key, as in QEMU: Ctrl-A x quits, Ctrl-A Ctrl-A sends Ctrl-A.
 */
#ifndef VMM_CONSOLE_H
#define VMM_CONSOLE_H

#include <pthread.h>
#include <stdbool.h>
#include <termios.h>

#include "vmm/hw/serial8250.h"
#include "vmm/kvm/vm.h"

struct console {
	struct serial8250 *uart;
	struct vm *vm;
	pthread_t vcpu_thread; /* signalled so a blocked KVM_RUN notices a quit */
	int kick_signal;
	pthread_t thread;
	int wake_pipe[2];
	bool running;
	bool raw;
	struct termios saved;
};

/* Starts the input thread if stdin is a terminal; otherwise does nothing
 * (the guest then gets no input, as with a disconnected serial line). */
int console_start(struct console *con, struct serial8250 *uart, struct vm *vm,
		  int kick_signal);
void console_stop(struct console *con);

#endif /* VMM_CONSOLE_H */
