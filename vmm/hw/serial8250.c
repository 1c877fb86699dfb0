/* SPDX-License-Identifier: MIT */
#include "vmm/hw/serial8250.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Register offsets and bits, as in the 16550A data sheet. */
enum {
	REG_RBR_THR_DLL = 0,
	REG_IER_DLM = 1,
	REG_IIR_FCR = 2,
	REG_LCR = 3,
	REG_MCR = 4,
	REG_LSR = 5,
	REG_MSR = 6,
	REG_SCR = 7,
};

#define IER_RDI 0x01 /* received data available */
#define IER_THRI 0x02 /* transmitter holding register empty */
#define IER_MASK 0x0f
#define IIR_NO_INT 0x01
#define IIR_THRI 0x02
#define IIR_RDI 0x04
#define IIR_FIFO_ENABLED 0xc0
#define FCR_ENABLE 0x01
#define FCR_CLEAR_RX 0x02
#define LCR_DLAB 0x80
#define MCR_DTR 0x01
#define MCR_RTS 0x02
#define MCR_OUT1 0x04
#define MCR_OUT2 0x08 /* gates the interrupt line on a PC */
#define MCR_LOOP 0x10
#define LSR_DR 0x01
#define LSR_THRE 0x20
#define LSR_TEMT 0x40
#define MSR_CTS 0x10
#define MSR_DSR 0x20
#define MSR_RI 0x40
#define MSR_DCD 0x80

void serial8250_init(struct serial8250 *uart, int out_fd, serial8250_irq_fn set_irq,
		     void *irq_ctx)
{
	memset(uart, 0, sizeof(*uart));
	pthread_mutex_init(&uart->lock, NULL);
	uart->out_fd = out_fd;
	uart->set_irq = set_irq;
	uart->irq_ctx = irq_ctx;
	/* Transmission is instant, so the transmitter always reads empty. */
	uart->lsr = LSR_THRE | LSR_TEMT;
	/* A cable is attached and the other end is ready. */
	uart->msr = MSR_DCD | MSR_DSR | MSR_CTS;
	uart->mcr = MCR_OUT2;
	uart->dll = 12; /* 9600 baud, the reset default */
}

void serial8250_destroy(struct serial8250 *uart)
{
	pthread_mutex_destroy(&uart->lock);
}

/* Highest-priority pending interrupt, as IIR reports it. */
static uint8_t pending_iir(const struct serial8250 *uart)
{
	if ((uart->ier & IER_RDI) && (uart->lsr & LSR_DR))
		return IIR_RDI;
	if ((uart->ier & IER_THRI) && uart->thri_pending)
		return IIR_THRI;
	return IIR_NO_INT;
}

static void update_irq(struct serial8250 *uart)
{
	int level = pending_iir(uart) != IIR_NO_INT && (uart->mcr & MCR_OUT2);

	if (level != uart->irq_level) {
		uart->irq_level = level;
		if (uart->set_irq)
			uart->set_irq(uart->irq_ctx, level);
	}
}

static void rx_push(struct serial8250 *uart, uint8_t byte)
{
	if (uart->rx_count == SERIAL8250_FIFO_SIZE) {
		uart->rx_dropped++; /* overrun, as real hardware would */
		return;
	}
	uart->rx[(uart->rx_head + uart->rx_count) % SERIAL8250_FIFO_SIZE] = byte;
	uart->rx_count++;
	uart->lsr |= LSR_DR;
}

static uint8_t rx_pop(struct serial8250 *uart)
{
	uint8_t byte;

	if (!uart->rx_count)
		return 0;
	byte = uart->rx[uart->rx_head];
	uart->rx_head = (uart->rx_head + 1) % SERIAL8250_FIFO_SIZE;
	if (--uart->rx_count == 0)
		uart->lsr &= ~LSR_DR;
	return byte;
}

static void transmit(struct serial8250 *uart, uint8_t byte)
{
	if (uart->mcr & MCR_LOOP) {
		rx_push(uart, byte);
	} else if (uart->out_fd >= 0) {
		ssize_t n;

		if (uart->before_tx)
			uart->before_tx(uart->before_tx_ctx);
		do
			n = write(uart->out_fd, &byte, 1);
		while (n < 0 && errno == EINTR);
		uart->tx_bytes++;
	}
	uart->thri_pending = true;
}

static uint8_t modem_status(const struct serial8250 *uart)
{
	uint8_t m = uart->mcr;

	if (!(m & MCR_LOOP))
		return uart->msr;
	/* Loopback wires the modem outputs to the inputs (Linux probes this). */
	return (uint8_t)(((m & MCR_RTS) ? MSR_CTS : 0) | ((m & MCR_DTR) ? MSR_DSR : 0) |
			 ((m & MCR_OUT1) ? MSR_RI : 0) | ((m & MCR_OUT2) ? MSR_DCD : 0));
}

static uint8_t reg_read(struct serial8250 *uart, unsigned reg)
{
	bool dlab = uart->lcr & LCR_DLAB;
	uint8_t iir;

	switch (reg) {
	case REG_RBR_THR_DLL:
		return dlab ? uart->dll : rx_pop(uart);
	case REG_IER_DLM:
		return dlab ? uart->dlm : uart->ier;
	case REG_IIR_FCR:
		iir = pending_iir(uart);
		/* Reading IIR acknowledges a THRE interrupt. */
		if (iir == IIR_THRI)
			uart->thri_pending = false;
		return iir | ((uart->fcr & FCR_ENABLE) ? IIR_FIFO_ENABLED : 0);
	case REG_LCR:
		return uart->lcr;
	case REG_MCR:
		return uart->mcr;
	case REG_LSR:
		return uart->lsr;
	case REG_MSR:
		return modem_status(uart);
	default:
		return uart->scr;
	}
}

static void reg_write(struct serial8250 *uart, unsigned reg, uint8_t val)
{
	bool dlab = uart->lcr & LCR_DLAB;

	switch (reg) {
	case REG_RBR_THR_DLL:
		if (dlab)
			uart->dll = val;
		else
			transmit(uart, val);
		break;
	case REG_IER_DLM:
		if (dlab) {
			uart->dlm = val;
		} else {
			/* Enabling THRI with an empty transmitter interrupts at once. */
			if ((val & IER_THRI) && !(uart->ier & IER_THRI))
				uart->thri_pending = true;
			uart->ier = val & IER_MASK;
		}
		break;
	case REG_IIR_FCR:
		uart->fcr = val & 0xc9; /* the bits that stay set */
		if (val & FCR_CLEAR_RX) {
			uart->rx_count = 0;
			uart->lsr &= ~LSR_DR;
		}
		break;
	case REG_LCR:
		uart->lcr = val;
		break;
	case REG_MCR:
		uart->mcr = val & 0x1f;
		break;
	case REG_LSR:
	case REG_MSR:
		break; /* read-only */
	default:
		uart->scr = val;
		break;
	}
}

void serial8250_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write)
{
	struct serial8250 *uart = opaque;

	pthread_mutex_lock(&uart->lock);
	/* Wider accesses touch consecutive registers, as on the ISA bus. */
	for (uint32_t i = 0; i < len; i++) {
		unsigned reg = (unsigned)(offset + i) % SERIAL8250_NR_REGS;

		if (is_write)
			reg_write(uart, reg, data[i]);
		else
			data[i] = reg_read(uart, reg);
	}
	update_irq(uart);
	pthread_mutex_unlock(&uart->lock);
}

unsigned serial8250_receive(struct serial8250 *uart, const uint8_t *buf, unsigned len)
{
	unsigned n = 0;

	pthread_mutex_lock(&uart->lock);
	while (n < len && uart->rx_count < SERIAL8250_FIFO_SIZE)
		rx_push(uart, buf[n++]);
	update_irq(uart);
	pthread_mutex_unlock(&uart->lock);
	return n;
}
