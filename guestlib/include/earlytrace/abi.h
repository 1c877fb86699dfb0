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

/*
 * Version 3 added ET_HC_HANDOFF_PERCPU (one ring per CPU). The VMM still
 * accepts version 2 in hypercall blocks and ring headers: version 2 is
 * version 3 without that hypercall, so a version-2 guest (one ring, handed
 * over with ET_HC_HANDOFF) works unchanged.
 */
#define ET_ABI_VERSION 3
#define ET_ABI_VERSION_OLDEST 2 /* the oldest version the VMM accepts */

/*
 * I/O ports owned by earlytrace. They sit in a block no PC device uses
 * (0x510-0x51f), away from QEMU's isa-debug-exit default (0x501) so that a
 * guest written for QEMU cannot end an earlytrace run by accident. The PC
 * devices' ports (COM1, i8042, ACPI sleep) are in arch/x86/pc_ports.h.
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
 * et_hypercall (8-byte aligned; others are ignored) to this port. The VMM
 * reads the block, acts, writes `result` (0 or a negative ET_E* code) back
 * into it, and returns to the guest; every address and length in the
 * block is checked against guest RAM first. One port-I/O exit per call.
 */
#define ET_PORT_HYPERCALL (ET_PORT_BASE + 0x4)

/*
 * Trampoline drain: the VMM's own trampolines (placed in guest memory in
 * trampoline mode, never called by guest code) write any byte here when
 * their batch is full; the VMM moves the batch into host memory and empties
 * it before the guest resumes. See struct et_tramp_batch.
 */
#define ET_PORT_TRAMP_DRAIN (ET_PORT_BASE + 0x8)

/*
 * Code hooks: on a KVM that reports no debug-register breakpoints, the
 * VMM's own breakpoints (the panic watch, --until, the handoff symbol,
 * --nmi-at) are `out ET_PORT_CODE_HOOK, al` written over the instruction
 * they watch, which the VMM puts back before it runs. `out imm8` reaches
 * only ports below 0x100, hence a port apart from the block above, one no
 * PC device decodes. Guests never write it; a write from anywhere but a
 * hook is an ordinary unclaimed port access.
 */
#define ET_PORT_CODE_HOOK 0xe7

/*
 * The trampolines' batch header (struct et_tramp_batch below), as byte
 * offsets for the assembly templates in trampolines/, and the guest ring
 * header's (struct et_ring) for guestlib's __fentry__.
 */
#define ET_TB_MAGIC 0x48435442u /* "BTCH" */
#define ET_TB_OFF_RECORDS 8
#define ET_TB_OFF_CAPACITY 16
#define ET_TB_OFF_CURSOR 24
#define ET_TB_HEADER_SIZE 64
#define ET_TB_RECORD_BYTES 32
/* The byte a full trampoline writes to ET_PORT_TRAMP_DRAIN: "drain, then
 * record my call from ecx/ebx (TSC low/high), esi (site + 5) and edi
 * (parent ip)". Any other byte asks for a drain only. */
#define ET_TB_DRAIN_RECORD 1

#define ET_RING_OFF_HEAD 24
#define ET_RING_OFF_SLOT_MASK 56
#define ET_RING_HEADER_SIZE 64
#define ET_RING_RECORD_SHIFT 5 /* records are 32 bytes */
/* A guest record's kind and flags as one 32-bit word (kind low). */
#define ET_RING_GUEST_KIND_FLAGS (1 | 3 << 16) /* ET_REC_CALL, ET_REC_SRC_GUEST */

#ifndef __ASSEMBLER__
#include <stdint.h>

enum et_hypercall_nr {
	/* arg0 = guest-physical address of a struct et_ring (8-byte aligned,
	 * else ET_E_INVAL), arg1 = its total size in bytes. The VMM restores
	 * every site it patched, copies the events it recorded into the ring
	 * (original timestamps), and stops recording; from then on the guest
	 * records into the ring itself. */
	ET_HC_HANDOFF = 1,
	/* arg0 = guest-physical address of a NUL-terminated marker string (at
	 * most 256 bytes): the VMM records it as an event on the trace clock. */
	ET_HC_MARK = 2,
	/* (version 3) One ring per CPU. arg0 = guest-physical address of an
	 * array of arg1 struct et_ring_ref (8-byte aligned), entry i CPU i's
	 * ring: the VMM's vCPU i, the i-th local APIC of the MADT. Each ring
	 * is checked as for ET_HC_HANDOFF, and none may overlap another;
	 * 1 <= arg1 <= the number of vCPUs. The VMM copies each early event
	 * into the ring of the vCPU that recorded it (an event from a vCPU
	 * with no ring goes to ring 0, keeping its cpu field), records guest
	 * events read from ring i as vCPU i's, and otherwise does what
	 * ET_HC_HANDOFF does. The array is read once, during the call. */
	ET_HC_HANDOFF_PERCPU = 3,
};

/* One CPU's ring in an ET_HC_HANDOFF_PERCPU array. */
struct et_ring_ref {
	uint64_t paddr; /* guest-physical address of its struct et_ring */
	uint64_t bytes; /* its total size in bytes */
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
 * records, one CPU's (an SMP guest hands over one per CPU:
 * ET_HC_HANDOFF_PERCPU). Any number of readers (the VMM reads it from guest
 * memory at any time). `head` counts records ever reserved; record i lives
 * in slot i % capacity. When the ring is full the oldest records are
 * overwritten (a flight recorder): the last `capacity` are kept, so a
 * reader always knows exactly what it missed.
 *
 * Writers on the ring's CPU may nest (an interrupt or NMI inside a
 * recording records too), so a record is reserved, then written:
 *   1. i = head++ in one instruction (xadd): the slot is this writer's;
 *   2. tsc, ip, parent_ip, kind and flags;
 *   3. cpu = (uint32_t)i, last: the record is complete.
 * A guest-written record (index >= vmm_events) is complete only while its
 * slot's cpu field holds its own index's low 32 bits: a record still being
 * written, or one whose slot a later lap reused, says another index.
 * Readers report guest records as the ring's CPU (cpu 0 for a ring
 * handed over with ET_HC_HANDOFF). The
 * first vmm_events records are the VMM's, written at the handoff, complete,
 * with their own cpu.
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

/*
 * What a record says. Guests only ever write ET_REC_CALL; the others are
 * the VMM's (trace files, and its events copied into a ring are calls).
 */
enum et_record_kind {
	ET_REC_CALL = 1, /* ip: function entry, parent_ip: return address */
	/* --graph: a traced function returned; ip: its entry, parent_ip: the
	 * address it returned to (the caller's real return address). */
	ET_REC_RET = 2,
	/* VM exits the VMM handled, in the exit encoding below. */
	ET_REC_PIO = 16,       /* port I/O: one per access (string I/O: each element) */
	ET_REC_MMIO = 17,      /* an access to guest-physical memory that is no RAM */
	ET_REC_MSR = 18,       /* rdmsr/wrmsr of an MSR traced with --trace-msr */
	ET_REC_HYPERCALL = 19, /* an earlytrace hypercall (ET_PORT_HYPERCALL) */
	ET_REC_HLT = 20,       /* HLT the KVM left to the VMM (no in-kernel LAPIC) */
	ET_REC_SHUTDOWN = 21,  /* triple fault */
};
#define ET_REC_KIND_MASK 0xffu	/* the kind is the low byte of `kind` */
#define ET_REC_EXIT_FIRST ET_REC_PIO

/* flags: who recorded the event (the low two bits). */
enum et_record_flags {
	ET_REC_SRC_BREAKPOINT = 1, /* the VMM, on an exit (an int3, or any exit event) */
	ET_REC_SRC_TRAMPOLINE = 2, /* a VMM trampoline in guest memory, before handoff */
	ET_REC_SRC_GUEST = 3,	   /* the guest's own fentry handler, after handoff */
	ET_REC_SRC_MASK = 3,
	/* Calls (--graph): the VMM redirected this call's return, so an
	 * ET_REC_RET follows when the function returns. */
	ET_REC_F_RET_TRACED = 1 << 2,
	/* Returns: the frame was abandoned (its return was never seen, say a
	 * longjmp past it); recorded when an outer frame returned. */
	ET_REC_F_UNWOUND = 1 << 3,
	/* Calls and returns the VMM read from a stock kernel's own ftrace
	 * ring (`trace --follow`); their source is ET_REC_SRC_GUEST. */
	ET_REC_F_FTRACE = 1 << 4,
};

/*
 * The exit encoding: an exit event is the same 32 bytes, read as
 *
 *	tsc        guest TSC when the VMM handled the exit
 *	ip         guest rip at the exit (the instruction that made it)
 *	parent_ip  the value read or written, zero-extended (hypercall: its
 *	           result; HLT, shutdown: 0)
 *	cpu        address bits 0-31: port, MSR index, hypercall number, or
 *	           guest-physical address (HLT, shutdown: 0)
 *	kind       bits 0-7 the kind; 8-9 log2 of the access size in bytes;
 *	           10 write (else read); 11 unclaimed (no device decoded the
 *	           port or address) or refused (the MSR access raised #GP);
 *	           12-15 address bits 32-35
 *	flags      bits 0-1 the source (ET_REC_SRC_BREAKPOINT: the VMM);
 *	           2-7 address bits 36-41; 8-15 the vCPU
 *
 * A 64-bit value and a 32-bit MSR index do not both fit beside the vCPU
 * otherwise; addresses are kept to 42 bits (4 TiB of guest-physical
 * space) and vCPUs to 256.
 */
#define ET_EXIT_WRITE (1u << 10)
#define ET_EXIT_UNCLAIMED (1u << 11)
#define ET_EXIT_ADDR_BITS 42
#define ET_EXIT_MAX_CPU 255u

struct et_ring {
	uint32_t magic;	      /* ET_RING_MAGIC */
	uint32_t abi_version; /* ET_ABI_VERSION (the VMM accepts from ET_ABI_VERSION_OLDEST) */
	uint32_t record_size; /* sizeof(struct et_ring_record) */
	uint32_t capacity;    /* number of record slots after the header */
	uint64_t tsc_khz;     /* guest TSC frequency, 0 if unknown */
	volatile uint64_t head; /* records ever reserved (32-bit writers: the
				 * low half only) */
	/* Records overwritten before anyone read them: head - capacity once
	 * head passes capacity. The writer does not keep it (that would cost
	 * every call); it is set when tracing stops (et_trace_stop) and by the
	 * VMM at the handoff. */
	volatile uint64_t lost;
	uint64_t vmm_events;  /* how many of the first records came from the VMM */
	uint64_t vmm_dropped; /* events the VMM dropped before the handoff */
	/* The writer's slot of record i is i & slot_mask (guestlib rings
	 * have a power-of-two capacity; readers use capacity). */
	uint64_t slot_mask;
	struct et_ring_record records[];
};
/*
 * The batch a trampoline records into. The VMM writes it into guest memory
 * with the trampolines and owns every field but `cursor` and the records.
 * Records are filled from the array's start towards its end; `cursor` is
 * where the next one goes, as a byte offset from the array's end (negative
 * while there is room; 32-bit kernels use its low half, sign-extended).
 * A trampoline reserves a record with one xadd of 32 to `cursor` (one vCPU
 * per batch: an interrupt or NMI nested in a recording sees the cursor
 * already moved), fills tsc, parent_ip and, last, ip (the return address
 * the site's call pushed): ip != 0 says the record is complete (the VMM
 * zeroes records before it hands them out again). When the xadd finds no
 * room the trampoline writes ET_TB_DRAIN_RECORD to ET_PORT_TRAMP_DRAIN: the
 * VMM takes the complete records, records that call itself from its
 * registers, and sets the cursor back. A record reserved but not yet
 * complete when the VMM drains (a recording interrupted, a run stopped in
 * the middle of one) stays reserved until a later drain finds it complete.
 * The VMM fills in cpu, kind, flags and turns each return address into its
 * site. One batch per vCPU.
 */
struct et_tramp_batch {
	uint32_t magic;	      /* ET_TB_MAGIC */
	uint32_t abi_version; /* ET_ABI_VERSION */
	uint64_t records;     /* offset of the record array from this header */
	uint64_t capacity;    /* records in the array */
	volatile int64_t cursor; /* the next record, from the array's end */
	int64_t start;	      /* the cursor after the last drain (VMM-set; the
			       * VMM keeps its own copy) */
	uint64_t drains;      /* drains so far (VMM-kept, for reports) */
	uint64_t reserved[2];
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
ET_ABI_ASSERT(sizeof(struct et_ring_ref) == 16, "a per-CPU ring reference is 16 bytes");
ET_ABI_ASSERT(sizeof(struct et_tramp_batch) == ET_TB_HEADER_SIZE, "batch header is 64 bytes");
ET_ABI_ASSERT(__builtin_offsetof(struct et_tramp_batch, records) == ET_TB_OFF_RECORDS, "");
ET_ABI_ASSERT(__builtin_offsetof(struct et_tramp_batch, capacity) == ET_TB_OFF_CAPACITY, "");
ET_ABI_ASSERT(__builtin_offsetof(struct et_tramp_batch, cursor) == ET_TB_OFF_CURSOR, "");
ET_ABI_ASSERT(sizeof(struct et_ring_record) == ET_TB_RECORD_BYTES, "");
ET_ABI_ASSERT(sizeof(struct et_ring_record) == 1u << ET_RING_RECORD_SHIFT, "");
ET_ABI_ASSERT(__builtin_offsetof(struct et_ring, head) == ET_RING_OFF_HEAD, "");
ET_ABI_ASSERT(__builtin_offsetof(struct et_ring, slot_mask) == ET_RING_OFF_SLOT_MASK, "");
ET_ABI_ASSERT(__builtin_offsetof(struct et_ring, records) == ET_RING_HEADER_SIZE, "");
ET_ABI_ASSERT(__builtin_offsetof(struct et_ring_record, cpu) == 24, "");

/* An exit event, unpacked (see "the exit encoding" above). */
struct et_exit {
	uint16_t kind;	   /* ET_REC_PIO ... */
	uint64_t addr;	   /* port, guest-physical address, MSR index, hypercall nr */
	uint64_t value;
	uint8_t size;	   /* bytes: 1, 2, 4 or 8; 0 when not an access */
	uint8_t write;	   /* 1: write */
	uint8_t unclaimed; /* 1: nobody decoded it, or the MSR access faulted */
	uint32_t cpu;
};

static inline unsigned et_rec_kind(const struct et_ring_record *r)
{
	return r->kind & ET_REC_KIND_MASK;
}

static inline int et_rec_is_exit(const struct et_ring_record *r)
{
	return et_rec_kind(r) >= ET_REC_EXIT_FIRST;
}

/* The vCPU of any record. */
static inline uint32_t et_rec_cpu(const struct et_ring_record *r)
{
	return et_rec_is_exit(r) ? (uint32_t)(r->flags >> 8) : r->cpu;
}

static inline struct et_ring_record et_exit_pack(uint64_t tsc, uint64_t ip, const struct et_exit *x)
{
	struct et_ring_record r;
	unsigned log2 = x->size >= 8 ? 3 : x->size >= 4 ? 2 : x->size >= 2 ? 1 : 0;
	uint64_t a = x->addr;

	r.tsc = tsc;
	r.ip = ip;
	r.parent_ip = x->value;
	r.cpu = (uint32_t)a;
	r.kind = (uint16_t)((x->kind & ET_REC_KIND_MASK) | log2 << 8 |
			    (x->write ? ET_EXIT_WRITE : 0) | (x->unclaimed ? ET_EXIT_UNCLAIMED : 0) |
			    ((a >> 32) & 0xf) << 12);
	r.flags = (uint16_t)(ET_REC_SRC_BREAKPOINT | ((a >> 36) & 0x3f) << 2 |
			     (x->cpu > ET_EXIT_MAX_CPU ? ET_EXIT_MAX_CPU : x->cpu) << 8);
	return r;
}

static inline struct et_exit et_exit_unpack(const struct et_ring_record *r)
{
	struct et_exit x;

	x.kind = (uint16_t)et_rec_kind(r);
	x.addr = r->cpu | (uint64_t)((r->kind >> 12) & 0xf) << 32 |
		 (uint64_t)((r->flags >> 2) & 0x3f) << 36;
	x.value = r->parent_ip;
	x.size = x.kind == ET_REC_PIO || x.kind == ET_REC_MMIO || x.kind == ET_REC_MSR
			 ? (uint8_t)(1u << ((r->kind >> 8) & 3))
			 : 0;
	x.write = (r->kind & ET_EXIT_WRITE) != 0;
	x.unclaimed = (r->kind & ET_EXIT_UNCLAIMED) != 0;
	x.cpu = et_rec_cpu(r);
	return x;
}
#endif /* !__ASSEMBLER__ */

#endif /* EARLYTRACE_ABI_H */
