/* SPDX-License-Identifier: MIT */
/*
 * Taking tracing over from the VMM: the handoff, then pointing __fentry__
 * (fentry_*.S, which records into the ring by itself) at the ring and
 * patching the guest's own fentry sites to call it.
 *
 * Sites come from __mcount_loc (-mrecord-mcount): the virtual address of
 * each function's first 5 bytes, built as the nop5 0f 1f 44 00 00
 * (-mnop-mcount). As in dynamic ftrace, a site is changed only when it holds
 * exactly the bytes we expect (nop5 to patch, our own call to restore);
 * anything else (a VMM int3 that was not restored, a site the compiler did
 * not lay out as we think) is counted as skipped and left alone.
 *
 * et_trace_start hands over one ring, which one CPU records into (its
 * recordings may nest: abi.h); et_trace_start_percpu hands over one per
 * CPU, and sites then call et_fentry_percpu, which finds the calling CPU's
 * ring through its per-CPU base (guestlib.h). Either way the start, the
 * stop and the patching run on one CPU while no other makes traced calls
 * (README.md, "Several CPUs").
 */
#include <earlytrace/guestlib.h>

#define ET_SITE_LEN 5
#define ET_OP_CALL 0xe8

static const uint8_t et_nop5[ET_SITE_LEN] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* The ring tracing records into (CPU 0's with several); NULL before
 * tracing started. */
static struct et_ring *volatile et_ring_active;
static volatile int et_tracing;
/* What the sites call while tracing: __fentry__ or et_fentry_percpu. */
static void (*et_patch_target)(void);
/* Per-CPU tracing: every CPU's ring, for et_trace_stop, and the array the
 * VMM reads during the handoff (guest-physical addresses). */
static struct et_ring *et_cpu_rings[ET_GUEST_MAX_CPUS];
static unsigned et_nr_cpu_rings;
static struct et_ring_ref et_ring_refs[ET_GUEST_MAX_CPUS] __attribute__((aligned(16)));

/*
 * Where __fentry__ records (fentry_*.S): the ring while tracing is on, else
 * a one-slot ring nobody reads (slot_mask 0, all zeroes), so __fentry__
 * needs no test of its own and a call that comes before tracing starts or
 * after it stops (a site still patched for a moment) lands there. One
 * pointer: a call nested anywhere in et_trace_start/stop sees one ring or
 * the other, never half of each. With several CPUs this is CPU 0's copy
 * of a per-CPU variable (et_fentry_percpu reads the calling CPU's copy).
 */
static uint8_t et_ring_sink[sizeof(struct et_ring) + sizeof(struct et_ring_record)]
	__attribute__((aligned(64)));
struct et_ring *volatile et_fentry_ring = (struct et_ring *)et_ring_sink;

ET_NOTRACE struct et_ring *et_trace_ring(void)
{
	return et_ring_active;
}

static inline ET_NOTRACE unsigned long irq_save(void)
{
	unsigned long flags;

	__asm__ volatile("pushf; pop %0; cli" : "=r"(flags) : : "memory");
	return flags;
}

static inline ET_NOTRACE void irq_restore(unsigned long flags)
{
	__asm__ volatile("push %0; popf" : : "r"(flags) : "memory", "cc");
}

/*
 * Makes the CPU see the code we just wrote. Text is writable in our test
 * kernels (no W^X, so no need to remap or clear CR0.WP), and on one CPU a
 * serializing instruction after the stores is enough for the new bytes to
 * be fetched (Intel SDM 3A, "Self-Modifying Code"); cpuid is the cheapest
 * serializing instruction available in any mode. Other CPUs would need the
 * int3 + IPI dance text_poke_bp does in Linux; we have none.
 */
static ET_NOTRACE void sync_core(void)
{
	uint32_t a = 0, b, c = 0, d;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d) : : "memory");
}

/* The call rel32 a site needs to reach the handler, or 0 if it cannot. */
static ET_NOTRACE int call_bytes(uintptr_t site, void (*target)(void), uint8_t out[ET_SITE_LEN])
{
	int64_t rel = (int64_t)((intptr_t)(uintptr_t)target - (intptr_t)(site + ET_SITE_LEN));
	uint32_t rel32 = (uint32_t)rel;

	/* Always in range on i386 (it wraps at 4 GiB); on x86_64 it is
	 * whenever the kernel's text spans less than 2 GiB. */
	if (sizeof(uintptr_t) == 8 && (rel < INT32_MIN || rel > INT32_MAX))
		return 0;
	out[0] = ET_OP_CALL;
	for (int i = 0; i < 4; i++)
		out[1 + i] = (uint8_t)(rel32 >> (8 * i));
	return 1;
}

/* Replaces the site's bytes with want if they are exactly expect. */
static ET_NOTRACE int replace_site(uintptr_t site, const uint8_t expect[ET_SITE_LEN],
				   const uint8_t want[ET_SITE_LEN])
{
	volatile uint8_t *p = (volatile uint8_t *)site;

	for (int i = 0; i < ET_SITE_LEN; i++) {
		if (p[i] != expect[i])
			return 0;
	}
	for (int i = 0; i < ET_SITE_LEN; i++)
		p[i] = want[i];
	return 1;
}

/* to_call: nop5 -> call et_patch_target; else that call -> nop5. */
static ET_NOTRACE void patch_all(int to_call, struct et_trace_info *info)
{
	unsigned long flags = irq_save();

	info->sites = 0;
	info->patched = 0;
	info->skipped = 0;
	for (const uintptr_t *s = __start_mcount_loc; s < __stop_mcount_loc; s++) {
		uint8_t call[ET_SITE_LEN];
		int ok = 0;

		info->sites++;
		if (*s && call_bytes(*s, et_patch_target, call)) {
			ok = to_call ? replace_site(*s, et_nop5, call)
				     : replace_site(*s, call, et_nop5);
		}
		if (ok)
			info->patched++;
		else
			info->skipped++;
	}
	sync_core();
	irq_restore(flags);
}

/* A VMM that answered must have left the ring's shape alone. */
static ET_NOTRACE int ring_intact(const struct et_ring *r, size_t bytes)
{
	return r->magic == ET_RING_MAGIC && r->record_size == sizeof(struct et_ring_record) &&
	       (uint64_t)r->capacity * sizeof(struct et_ring_record) <= bytes - sizeof(*r);
}

/* Recording first, then the sites: every call a patched site makes is one
 * tracing is on for. */
static ET_NOTRACE void start_recording(struct et_ring *r0, void (*target)(void),
				       struct et_trace_info *info)
{
	et_ring_active = r0;
	/* Per-CPU: every CPU's own copy already points at its ring (the
	 * guest set them up); this one need not be any CPU's. */
	if (target == __fentry__)
		et_fentry_ring = r0;
	et_patch_target = target;
	__asm__ volatile("" : : : "memory");
	et_tracing = 1;
	patch_all(1, info);
}

/* What both starts check first; fills in info's defaults. */
static ET_NOTRACE int may_start(struct et_trace_info *info)
{
	info->handoff_result = ET_HC_NO_VMM;
	info->sites = info->patched = info->skipped = 0;
	/* One handoff per boot: the VMM refuses a second one too. */
	return et_ring_active ? ET_E_STATE : 0;
}

ET_NOTRACE int et_trace_start(void *buf, size_t bytes, uint64_t tsc_khz,
			      struct et_trace_info *info)
{
	struct et_trace_info local;
	struct et_ring *r = buf;
	int64_t res;

	if (!info)
		info = &local;
	if (may_start(info))
		return ET_E_STATE;
	if (et_ring_init(r, bytes, tsc_khz))
		return ET_E_INVAL;

	/*
	 * The VMM restores the sites it patched and fills the ring's first
	 * vmm_events records (head, lost and vmm_dropped with them). From here
	 * on it records nothing, so calls until tracing is on are not traced.
	 */
	res = et_hypercall(ET_HC_HANDOFF, et_virt_to_phys(r), bytes);
	info->handoff_result = res;
	if (res < 0)
		return (int)res;
	if (!ring_intact(r, bytes))
		return ET_E_INVAL;
	start_recording(r, __fentry__, info);
	return 0;
}

ET_NOTRACE int et_trace_start_percpu(void *const bufs[], unsigned nr_cpus, size_t bytes_each,
				     uint64_t tsc_khz, struct et_trace_info *info)
{
	struct et_trace_info local;
	int64_t res;

	if (!info)
		info = &local;
	if (may_start(info))
		return ET_E_STATE;
	if (!bufs || nr_cpus == 0 || nr_cpus > ET_GUEST_MAX_CPUS)
		return ET_E_INVAL;
	for (unsigned i = 0; i < nr_cpus; i++) {
		if (et_ring_init(bufs[i], bytes_each, tsc_khz))
			return ET_E_INVAL;
		et_cpu_rings[i] = bufs[i];
		et_ring_refs[i].paddr = et_virt_to_phys(bufs[i]);
		et_ring_refs[i].bytes = bytes_each;
	}
	et_nr_cpu_rings = nr_cpus;

	/* As et_trace_start, with each early event in its CPU's ring. */
	res = et_hypercall(ET_HC_HANDOFF_PERCPU, et_virt_to_phys(et_ring_refs), nr_cpus);
	info->handoff_result = res;
	if (res < 0)
		return (int)res;
	for (unsigned i = 0; i < nr_cpus; i++)
		if (!ring_intact(et_cpu_rings[i], bytes_each))
			return ET_E_INVAL;
	start_recording(et_cpu_rings[0], et_fentry_percpu, info);
	return 0;
}

/* The writer does not count what it overwrote (abi.h): say it now. */
static ET_NOTRACE void count_lost(struct et_ring *r)
{
	uint64_t head = r->head;

	r->lost = head > r->capacity ? head - r->capacity : 0;
}

ET_NOTRACE int et_trace_stop(struct et_trace_info *info)
{
	struct et_trace_info local;

	if (!info)
		info = &local;
	if (!et_tracing)
		return ET_E_STATE;
	patch_all(0, info);
	if (et_patch_target == __fentry__)
		et_fentry_ring = (struct et_ring *)et_ring_sink;
	__asm__ volatile("" : : : "memory");
	et_tracing = 0;
	if (et_nr_cpu_rings) {
		for (unsigned i = 0; i < et_nr_cpu_rings; i++)
			count_lost(et_cpu_rings[i]);
	} else {
		count_lost(et_ring_active);
	}
	return 0;
}
