/* SPDX-License-Identifier: MIT */
/* exits=sequence: a scripted run of port I/O, MMIO and MSR accesses. */
#ifndef IMAGES_EXITSEQ_H
#define IMAGES_EXITSEQ_H

/*
 * Three traced functions, each making its own accesses, in this order:
 *   es_port:  out 0x80 <- 0x11 (byte; no device: unclaimed), in 0x3fd (COM1 LSR)
 *   es_mmio:  write 0x12345678 (dword) to 0xd0000000, read a dword at
 *             0xd0000004 (no RAM and no device there: unclaimed, reads ~0)
 *   es_msr:   wrmsr 0x174 (IA32_SYSENTER_CS) <- 0x10, rdmsr 0x174
 * and prints "exits: sequence done msr=<value read back>". A VMM that
 * traces MSR 0x174 must hand back what was written (0x10).
 */
void exitseq_run(void);

#endif /* IMAGES_EXITSEQ_H */
