/* SPDX-License-Identifier: MIT */
/*
 * The earlytrace guest ABI: everything a guest and the VMM must agree on.
 *
 * This header is shared by the host (vmm/) and freestanding guests
 * (guestlib/, images/). It uses only fixed-width integer types so it compiles
 * in both worlds. Bump ET_ABI_VERSION on any incompatible change.
 */
#ifndef EARLYTRACE_ABI_H
#define EARLYTRACE_ABI_H

#define ET_ABI_VERSION 1

/*
 * I/O ports owned by earlytrace. They sit in a block no PC device uses
 * (0x510-0x51f), away from QEMU's isa-debug-exit default (0x501) so that a
 * guest written for QEMU cannot end an earlytrace run by accident.
 */
#define ET_PORT_BASE 0x510

/*
 * Debug exit: an 8-, 16- or 32-bit write of value V ends the run and the VMM
 * exits with status V & 0xff (unlike QEMU's (V << 1) | 1, status 0 is
 * reachable, so a guest can report success directly).
 */
#define ET_PORT_DEBUG_EXIT (ET_PORT_BASE + 0x0)

/* Legacy PC ports the VMM emulates for guests. */
#define ET_PORT_COM1 0x3f8 /* 8250/16550 UART, 8 registers */
#define ET_PORT_I8042_DATA 0x60
#define ET_PORT_I8042_CMD 0x64 /* write 0xfe: pulse reset line */
#define ET_I8042_CMD_RESET 0xfe

#endif /* EARLYTRACE_ABI_H */
