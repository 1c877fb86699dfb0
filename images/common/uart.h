/* SPDX-License-Identifier: MIT */
/* Polled output on the VMM's COM1 16550. */
#ifndef IMAGES_UART_H
#define IMAGES_UART_H

/* Register offsets from PC_PORT_COM1 (arch/x86/pc_ports.h). */
#define UART_THR 0 /* transmit holding register (write) */
#define UART_LSR 5 /* line status register */

void uart_putc(char c);

#endif /* IMAGES_UART_H */
