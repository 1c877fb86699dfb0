/* SPDX-License-Identifier: MIT */
/*
 * guestlib: the freestanding library a guest kernel links to take tracing
 * over from the earlytrace VMM (see guestlib/README.md).
 *
 * No libc: it needs only <stdint.h>/<stddef.h> and builds with
 * -ffreestanding for i386 and x86_64. It must be compiled WITHOUT -pg: it
 * implements __fentry__, and a traced guestlib would trace itself.
 *
 * Typical use (one CPU, ring 0):
 *
 *	// the header and 2^13 records (the ring uses a power of two)
 *	static uint8_t ring_buf[64 + (8192 << 5)] __attribute__((aligned(64)));
 *	struct et_trace_info info;
 *
 *	et_guest_init(phys - virt);            // once, before any hypercall
 *	et_trace_start(ring_buf, sizeof(ring_buf), 0, &info);
 *	...                                    // traced code
 *	et_trace_stop(&info);
 */
#ifndef EARLYTRACE_GUESTLIB_H
#define EARLYTRACE_GUESTLIB_H

#include <stddef.h>
#include <stdint.h>

#include <earlytrace/abi.h>

/* Keeps a function free of an fentry site even in a -pg build. */
#define ET_NOTRACE __attribute__((no_instrument_function))

/* ---- hypercalls (hypercall.c) ------------------------------------------ */

/*
 * Tells guestlib how to turn its own (kernel-image) virtual addresses into
 * guest-physical ones: phys = virt + phys_offset (modulo 2^64). One linear
 * offset is enough for our test kernels and for a Linux-style direct map;
 * everything guestlib hands the VMM (its hypercall block, the ring) must be
 * in that mapping and physically contiguous. Default 0 (virtual = physical).
 */
void et_guest_init(int64_t phys_offset);

/* virt + the offset set by et_guest_init(). */
uint64_t et_virt_to_phys(const void *virt);

/*
 * Value `result` holds before the VMM writes it. A VMM without the
 * hypercall leaves the port unclaimed and the block untouched, so reading
 * it back means "no VMM support". Positive, so it cannot be mistaken for
 * success (0) or an ET_E_* error (negative).
 */
#define ET_HC_NO_VMM 1

/*
 * Issues hypercall nr with two arguments: fills a struct et_hypercall and
 * writes its guest-physical address to ET_PORT_HYPERCALL with a 32-bit out.
 * Returns the VMM's result (0 or ET_E_*), ET_HC_NO_VMM if nobody answered,
 * or ET_E_INVAL if the block is not below 4 GiB physical. Not reentrant
 * (one static block); it runs with interrupts off.
 */
int64_t et_hypercall(uint32_t nr, uint64_t arg0, uint64_t arg1);

/* ---- the ring (ring.c) ------------------------------------------------- */

/*
 * Lays a struct et_ring over buf[0, bytes): header, then as many records as
 * fit, rounded down to a power of two (so recording needs no division; at
 * most 2^31), every one empty. Returns 0, or ET_E_INVAL if not even one
 * record fits.
 */
int et_ring_init(struct et_ring *r, size_t bytes, uint64_t tsc_khz);

/*
 * Copies record i (counted from the ring's first, as head counts) into
 * *out if the ring still holds it complete: 1, else 0 (not written yet,
 * overwritten, or still being written). Guest records come out as cpu 0.
 * Safe against writers nested in the reader (ring.c says how). Rings from
 * et_ring_init only (a power-of-two capacity).
 */
int et_ring_read(const struct et_ring *r, uint64_t i, struct et_ring_record *out);

/* Reads the TSC. */
static inline __attribute__((always_inline)) uint64_t et_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* ---- fentry handler (fentry_*.S + patch.c) ----------------------------- */

/* The guest's own tracer hook; sites are patched to call it. Not callable
 * from C (it preserves every register and expects a site's stack). */
void __fentry__(void);

/*
 * The same for per-CPU tracing (et_trace_start_percpu): it records into
 * the ring the calling CPU's copy of et_fentry_ring points to, read as a
 * per-CPU variable the way Linux reads its own: on x86_64
 * %gs:et_fentry_ring(%rip), i.e. at GS base + &et_fentry_ring; on i386
 * %fs:et_fentry_ring, at the FS segment's base + &et_fentry_ring. So the
 * guest gives each CPU a per-CPU base (GS base MSR, or its FS descriptor)
 * such that base + &et_fentry_ring is a pointer-sized slot of that CPU's
 * own (a base of 0 makes et_fentry_ring itself the slot), set before the
 * CPU can make a traced call. One extra segment prefix, no lock, no exit.
 */
void et_fentry_percpu(void);

/*
 * Where __fentry__ records; with per-CPU tracing, the per-CPU variable
 * above (each CPU's copy points at its ring).
 */
extern struct et_ring *volatile et_fentry_ring;

/* Sites recorded at build time (-mrecord-mcount): virtual addresses of the
 * 5-byte nops, one pointer-sized entry each. The linker script brackets the
 * __mcount_loc section with these. */
extern const uintptr_t __start_mcount_loc[];
extern const uintptr_t __stop_mcount_loc[];

/* ---- start/stop (patch.c) ---------------------------------------------- */

struct et_trace_info {
	int64_t handoff_result; /* 0, ET_E_*, or ET_HC_NO_VMM */
	uint32_t sites;		/* entries in __mcount_loc */
	uint32_t patched;	/* sites changed (nop5 -> call, or back) */
	uint32_t skipped;	/* sites whose bytes were not what we expected */
};

/*
 * Takes tracing over: et_ring_init(buf, bytes, tsc_khz), then
 * ET_HC_HANDOFF (the VMM restores its sites and copies its early events
 * into the ring), then patches every nop5 site in __mcount_loc to
 * `call __fentry__`, then enables recording into the ring.
 *
 * Returns 0 when guest tracing runs: the handoff succeeded, or no VMM
 * answered (info->handoff_result == ET_HC_NO_VMM; the ring then holds only
 * the guest's own events). Returns a negative ET_E_* when it does not: the
 * buffer is unusable, tracing already runs, or the VMM refused the handoff
 * (its own patches may still be in place, so we leave the sites alone).
 * info may be NULL. Call with interrupts off or on; one CPU only. Once per
 * boot: a second call returns ET_E_STATE, even after et_trace_stop().
 */
int et_trace_start(void *buf, size_t bytes, uint64_t tsc_khz, struct et_trace_info *info);

/*
 * Stops recording and puts the nop5 back at every site that still holds
 * our call (others are counted in info->skipped). The ring stays readable
 * through et_trace_ring(). Returns 0, or ET_E_STATE if tracing was not
 * running. info may be NULL.
 */
int et_trace_stop(struct et_trace_info *info);

/* The ring tracing records into (NULL before et_trace_start; with
 * per-CPU tracing, CPU 0's). */
struct et_ring *et_trace_ring(void);

/* The most CPUs et_trace_start_percpu takes. */
#define ET_GUEST_MAX_CPUS 64

/*
 * Per-CPU tracing, for a guest with several CPUs: bufs[i] (bytes_each
 * bytes, 64-byte aligned, in the et_guest_init mapping) becomes CPU i's
 * ring, CPU i being the VMM's vCPU i (the i-th local APIC in the MADT).
 * Like et_trace_start otherwise, with ET_HC_HANDOFF_PERCPU (the VMM puts
 * each early event in its CPU's ring), and sites call et_fentry_percpu.
 * Before this call the guest must have pointed every CPU's copy of
 * et_fentry_ring at (struct et_ring *)bufs[i] (any CPU that may make a
 * traced call once the sites are patched, even before it started), and no
 * other CPU may run traced code while the sites are patched (here, and in
 * et_trace_stop). Returns 0, or ET_E_INVAL for 0 or more than
 * ET_GUEST_MAX_CPUS CPUs or an unusable buffer, or what et_trace_start
 * returns.
 */
int et_trace_start_percpu(void *const bufs[], unsigned nr_cpus, size_t bytes_each,
			  uint64_t tsc_khz, struct et_trace_info *info);

/* ---- trampoline region ------------------------------------------------- */

/*
 * ET_TRAMPOLINE_REGION(name, bytes): reserves a zero-filled, page-aligned
 * array of `bytes` rounded up to whole pages in the section
 * .earlytrace.trampolines, flagged allocatable, writable and executable.
 * A VMM may later place call trampolines there (the guest owns the memory,
 * so it is never reused behind the VMM's back). The guest's linker script
 * must put the section in an executable PT_LOAD, e.g. right after .text:
 *
 *	.earlytrace.trampolines : { KEEP(*(.earlytrace.trampolines)) } :text
 *
 * The "#" ends gcc's own section flags in the assembler output (they would
 * say "aw", not executable), the same trick Linux once used for .data..page
 * sections. The test kernels reserve 64 KiB (images/common/trampoline_area.c,
 * placed by their kernel.ld).
 */
#define ET_PAGE_SIZE 4096
#define ET_TRAMPOLINE_REGION(name, bytes)                                              \
	__attribute__((section(".earlytrace.trampolines,\"awx\",@progbits #"),         \
		       aligned(ET_PAGE_SIZE), used))                                   \
	unsigned char name[(((bytes) + ET_PAGE_SIZE - 1) / ET_PAGE_SIZE) * ET_PAGE_SIZE]

#endif /* EARLYTRACE_GUESTLIB_H */
