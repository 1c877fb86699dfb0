/* SPDX-License-Identifier: MIT */
/* exits=sequence: a scripted run of port I/O, MMIO and MSR accesses. */
#ifndef IMAGES_EXITSEQ_H
#define IMAGES_EXITSEQ_H

/*
 * Three traced functions, each making its own accesses, in this order:
 *   es_port:  out PC_PORT_POST (0x80) <- 0x11 (byte; no device: unclaimed),
 *             in COM1's LSR (0x3fd)
 *   es_mmio:  write 0x12345678 (dword) to LAYOUT_UNCLAIMED_MMIO (0xd0000000),
 *             read a dword 4 bytes on (no RAM and no device there:
 *             unclaimed, reads ~0)
 *   es_msr:   wrmsr 0x174 (IA32_SYSENTER_CS) <- 0x10, rdmsr 0x174
 * and prints "exits: sequence done msr=<value read back>". A VMM that
 * traces MSR 0x174 must hand back what was written (0x10).
 */
void exitseq_run(void);

#endif /* IMAGES_EXITSEQ_H */
