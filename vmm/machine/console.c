/* SPDX-License-Identifier: MIT */
#include "vmm/machine/console.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/error.h"

#define ESCAPE_KEY 0x01 /* Ctrl-A */

static void quit(struct console *con)
{
	vm_request_stop(con->vm, RUN_END_CONSOLE_QUIT);
	pthread_kill(con->vcpu_thread, con->kick_signal);
}

/* Delivers bytes, waiting while the guest has not drained its FIFO. */
static void deliver(struct console *con, const uint8_t *buf, unsigned len)
{
	const struct timespec pause = { .tv_nsec = 1000000 };

	while (len && vm_stop_reason(con->vm) == RUN_END_NONE) {
		unsigned n = serial8250_receive(con->uart, buf, len);

		buf += n;
		len -= n;
		if (len)
			nanosleep(&pause, NULL);
	}
}

static void *input_thread(void *arg)
{
	struct console *con = arg;
	bool escaped = false;
	struct pollfd fds[2] = {
		{ .fd = STDIN_FILENO, .events = POLLIN },
		{ .fd = con->wake_pipe[0], .events = POLLIN },
	};

	for (;;) {
		uint8_t buf[64], out[64];
		unsigned n_out = 0;
		ssize_t n;

		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents)
			break;
		if (!(fds[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n <= 0)
			break; /* end of input: the guest just gets no more */
		for (ssize_t i = 0; i < n; i++) {
			if (escaped) {
				escaped = false;
				if (buf[i] == 'x' || buf[i] == 'X') {
					quit(con);
					return NULL;
				}
				if (buf[i] == ESCAPE_KEY)
					out[n_out++] = ESCAPE_KEY;
				continue;
			}
			if (buf[i] == ESCAPE_KEY)
				escaped = true;
			else
				out[n_out++] = buf[i];
		}
		deliver(con, out, n_out);
	}
	return NULL;
}

static void enter_raw_mode(struct console *con)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &con->saved) < 0)
		return;
	raw = con->saved;
	/* Keys go to the guest unprocessed (Ctrl-C included, as on a serial
	 * line); output keeps its newline translation for a readable log. */
	raw.c_iflag &= ~(unsigned)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
	raw.c_lflag &= ~(unsigned)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
	raw.c_cflag = (raw.c_cflag & ~(unsigned)(CSIZE | PARENB)) | CS8;
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
		con->raw = true;
}

int console_start(struct console *con, struct serial8250 *uart, struct vm *vm,
		  int kick_signal)
{
	sigset_t all, old;
	int err;

	memset(con, 0, sizeof(*con));
	con->uart = uart;
	con->vm = vm;
	con->vcpu_thread = pthread_self();
	con->kick_signal = kick_signal;
	if (!isatty(STDIN_FILENO))
		return 0;
	if (pipe(con->wake_pipe) < 0)
		return et_error_errno("cannot create the console pipe");
	enter_raw_mode(con);

	/* The thread must never take the VMM's signals: they are for the vCPU
	 * thread, whose KVM_RUN they interrupt. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&con->thread, NULL, input_thread, con);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		console_stop(con);
		errno = err;
		return et_error_errno("cannot start the console thread");
	}
	con->running = true;
	return 0;
}

void console_stop(struct console *con)
{
	if (con->running) {
		ssize_t ignored = write(con->wake_pipe[1], "", 1);

		(void)ignored;
		pthread_join(con->thread, NULL);
		con->running = false;
	}
	if (con->raw) {
		tcsetattr(STDIN_FILENO, TCSANOW, &con->saved);
		con->raw = false;
	}
	if (con->wake_pipe[0] > 0) {
		close(con->wake_pipe[0]);
		close(con->wake_pipe[1]);
		con->wake_pipe[0] = con->wake_pipe[1] = 0;
	}
}
