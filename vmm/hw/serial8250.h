/* SPDX-License-Identifier: MIT */
/*
 * 8250/16550A UART (COM1), the console every x86 kernel knows.
 *
 * Output bytes go to a host file descriptor as soon as the guest writes
 * them, so nothing is lost when a guest crashes. Input arrives from another
 * thread through serial8250_receive() into a 16-byte FIFO and raises the
 * interrupt line, so a person can type into the guest.
 */
#ifndef VMM_HW_SERIAL8250_H
#define VMM_HW_SERIAL8250_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/kvm/iobus.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SERIAL8250_FIFO_SIZE 16
#define SERIAL8250_NR_REGS 8

typedef void (*serial8250_irq_fn)(void *ctx, int level);

struct serial8250 {
	pthread_mutex_t lock; /* vCPU thread and input thread both touch it */
	uint8_t ier, lcr, mcr, lsr, msr, scr, dll, dlm, fcr;
	bool thri_pending; /* "transmitter empty" interrupt not yet acknowledged */
	uint8_t rx[SERIAL8250_FIFO_SIZE];
	unsigned rx_head, rx_count;
	int out_fd; /* -1: output discarded */
	uint64_t tx_bytes, rx_dropped;
	serial8250_irq_fn set_irq;
	void *irq_ctx;
	int irq_level;
	/* Called before each byte goes to out_fd (NULL: none): a progress
	 * line on the same terminal erases itself. */
	void (*before_tx)(void *ctx);
	void *before_tx_ctx;
};

void serial8250_init(struct serial8250 *uart, int out_fd, serial8250_irq_fn set_irq,
		     void *irq_ctx);
void serial8250_destroy(struct serial8250 *uart);

/* iobus handler for the 8 registers. */
void serial8250_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write);

/* Queues host input; returns how many bytes fit in the FIFO. */
unsigned serial8250_receive(struct serial8250 *uart, const uint8_t *buf, unsigned len);

#ifdef __cplusplus
}
#endif

#endif /* VMM_HW_SERIAL8250_H */
