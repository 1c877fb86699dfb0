/* SPDX-License-Identifier: MIT */
/* Polled output on the VMM's COM1 16550. */
#ifndef IMAGES_UART_H
#define IMAGES_UART_H

void uart_putc(char c);

#endif /* IMAGES_UART_H */
