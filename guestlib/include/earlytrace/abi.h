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

/*
 * Hypercall: a 32-bit write of the guest-physical address of a struct
 * et_hypercall to this port. The VMM reads the block, acts, writes
 * `result` (0 or a negative ET_E* code) back into it, and returns to the
 * guest; every address and length in the block is checked against guest
 * RAM first. One port-I/O exit per call.
 */
#define ET_PORT_HYPERCALL (ET_PORT_BASE + 0x4)

/*
 * Trampoline drain: the VMM's own trampolines (placed in guest memory in
 * trampoline mode, never called by guest code) write any byte here when
 * their batch is full; the VMM moves the batch into host memory and empties
 * it before the guest resumes. See struct et_tramp_batch.
 */
#define ET_PORT_TRAMP_DRAIN (ET_PORT_BASE + 0x8)

/* Legacy PC ports the VMM emulates for guests. */
#define ET_PORT_COM1 0x3f8 /* 8250/16550 UART, 8 registers */
#define ET_PORT_I8042_DATA 0x60
#define ET_PORT_I8042_CMD 0x64 /* write 0xfe: pulse reset line */
#define ET_I8042_CMD_RESET 0xfe

/*
 * The trampolines' batch header (struct et_tramp_batch below), as byte
 * offsets for the assembly templates in trampolines/.
 */
#define ET_TB_MAGIC 0x48435442u /* "BTCH" */
#define ET_TB_OFF_RECORDS 8
#define ET_TB_OFF_CAPACITY 16
#define ET_TB_OFF_COUNT 24
#define ET_TB_HEADER_SIZE 64
#define ET_TB_RECORD_SHIFT 5 /* records are 32 bytes */

#ifndef __ASSEMBLER__
#include <stdint.h>

enum et_hypercall_nr {
	/* arg0 = guest-physical address of a struct et_ring, arg1 = its total
	 * size in bytes. The VMM restores every site it patched, copies the
	 * events it recorded into the ring (original timestamps), and stops
	 * recording; from then on the guest records into the ring itself. */
	ET_HC_HANDOFF = 1,
	/* arg0 = guest-physical address of a NUL-terminated marker string (at
	 * most 256 bytes): the VMM records it as an event on the trace clock. */
	ET_HC_MARK = 2,
};

#define ET_E_INVAL (-22)   /* bad number, address or length */
#define ET_E_VERSION (-95) /* abi_version is not one the VMM speaks */
#define ET_E_STATE (-16)   /* e.g. a second handoff */

struct et_hypercall {
	uint32_t abi_version; /* ET_ABI_VERSION */
	uint32_t nr;	      /* enum et_hypercall_nr */
	uint64_t arg0;
	uint64_t arg1;
	int64_t result;	      /* written by the VMM */
};

/*
 * The guest's trace ring: a header followed by `capacity` fixed-size
 * records. Single producer (the guest), any number of readers (the VMM
 * reads it from guest memory at any time). `head` counts records ever
 * written; record i lives in slot i % capacity. When the ring is full the
 * oldest records are overwritten (a flight recorder) and `lost` counts
 * them, so a reader always knows exactly what it missed.
 */
#define ET_RING_MAGIC 0x474e5254u /* "TRNG" */

struct et_ring_record {
	uint64_t tsc;	    /* guest TSC */
	uint64_t ip;	    /* function entry (guest virtual) */
	uint64_t parent_ip; /* return address into the caller */
	uint32_t cpu;
	uint16_t kind;	    /* enum et_record_kind */
	uint16_t flags;	    /* enum et_record_flags */
};

enum et_record_kind {
	ET_REC_CALL = 1,
};

/* flags: who recorded the event (the low two bits). */
enum et_record_flags {
	ET_REC_SRC_BREAKPOINT = 1, /* the VMM, on an int3 exit, before handoff */
	ET_REC_SRC_TRAMPOLINE = 2, /* a VMM trampoline in guest memory, before handoff */
	ET_REC_SRC_GUEST = 3,	   /* the guest's own fentry handler, after handoff */
	ET_REC_SRC_MASK = 3,
};

struct et_ring {
	uint32_t magic;	      /* ET_RING_MAGIC */
	uint32_t abi_version; /* ET_ABI_VERSION */
	uint32_t record_size; /* sizeof(struct et_ring_record) */
	uint32_t capacity;    /* number of record slots after the header */
	uint64_t tsc_khz;     /* guest TSC frequency, 0 if unknown */
	volatile uint64_t head; /* records ever written */
	volatile uint64_t lost; /* records overwritten before anyone read them */
	uint64_t vmm_events;  /* how many of the first records came from the VMM */
	uint64_t vmm_dropped; /* events the VMM dropped before the handoff */
	uint64_t reserved;
	struct et_ring_record records[];
};
/*
 * The batch a trampoline records into. The VMM writes it into guest memory
 * with the trampolines and owns every field but `count`, which the
 * trampoline bumps after filling records[count] (tsc, ip = the return
 * address the site's call pushed, parent_ip; the VMM fills in the rest and
 * turns the return address into the site's address while draining). When
 * count reaches capacity the trampoline writes to ET_PORT_TRAMP_DRAIN and
 * retries; the VMM has set count back to 0 by then. Records follow the
 * header at offset `records`. One batch per vCPU.
 */
struct et_tramp_batch {
	uint32_t magic;	      /* ET_TB_MAGIC */
	uint32_t abi_version; /* ET_ABI_VERSION */
	uint64_t records;     /* offset of the record array from this header */
	uint64_t capacity;    /* records before the next drain (VMM-set) */
	volatile uint64_t count; /* records filled since the last drain */
	uint64_t drains;      /* drains so far (VMM-kept, for reports) */
	uint64_t reserved[3];
};

/* The layouts are the ABI: both compilers must agree on them. */
#ifdef __cplusplus
#define ET_ABI_ASSERT static_assert
#else
#define ET_ABI_ASSERT _Static_assert
#endif
ET_ABI_ASSERT(sizeof(struct et_hypercall) == 32, "hypercall block is 32 bytes");
ET_ABI_ASSERT(sizeof(struct et_ring_record) == 32, "ring records are 32 bytes");
ET_ABI_ASSERT(sizeof(struct et_ring) == 64, "ring header is 64 bytes");
ET_ABI_ASSERT(sizeof(struct et_tramp_batch) == ET_TB_HEADER_SIZE, "batch header is 64 bytes");
ET_ABI_ASSERT(__builtin_offsetof(struct et_tramp_batch, records) == ET_TB_OFF_RECORDS, "");
ET_ABI_ASSERT(__builtin_offsetof(struct et_tramp_batch, capacity) == ET_TB_OFF_CAPACITY, "");
ET_ABI_ASSERT(__builtin_offsetof(struct et_tramp_batch, count) == ET_TB_OFF_COUNT, "");
ET_ABI_ASSERT(sizeof(struct et_ring_record) == 1u << ET_TB_RECORD_SHIFT, "");
#endif /* !__ASSEMBLER__ */

#endif /* EARLYTRACE_ABI_H */
