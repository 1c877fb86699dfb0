/* SPDX-License-Identifier: MIT */
/*
 * Transmit-only 16550 driver. The VMM's UART needs no setup (no baud rate,
 * no FIFO control), so we only poll LSR.THRE and write THR. Bytes go out
 * raw: the kernels end lines with "\n" alone, never "\r\n".
 */
#include "uart.h"

#include <arch/x86/pc_ports.h>

#include "io.h"

#define UART_LSR_THRE 0x20	/* THR empty: ready for the next byte */

/* Give up waiting after this many polls, as Linux's early serial does, so a
 * UART that never reports ready slows the kernel down but cannot hang it. */
#define UART_POLL_LIMIT 0xffff

void uart_putc(char c)
{
	for (unsigned i = 0; i < UART_POLL_LIMIT; i++) {
		if (inb(PC_PORT_COM1 + UART_LSR) & UART_LSR_THRE)
			break;
	}
	outb(PC_PORT_COM1 + UART_THR, (uint8_t)c);
}
