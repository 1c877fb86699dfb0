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
 * One CPU is assumed throughout: the state below is global and the ring
 * is one CPU's (recordings on it may nest: abi.h).
 */
#include <earlytrace/guestlib.h>

#define ET_SITE_LEN 5
#define ET_OP_CALL 0xe8

static const uint8_t et_nop5[ET_SITE_LEN] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* The ring tracing records into; NULL when tracing is off. */
static struct et_ring *volatile et_ring_active;
static volatile int et_tracing;

/*
 * Where __fentry__ records (fentry_*.S): the ring while tracing is on, else
 * a one-slot ring nobody reads (slot_mask 0, all zeroes), so __fentry__
 * needs no test of its own and a call that comes before tracing starts or
 * after it stops (a site still patched for a moment) lands there. One
 * pointer: a call nested anywhere in et_trace_start/stop sees one ring or
 * the other, never half of each.
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

/* The call rel32 a site needs to reach __fentry__, or 0 if it cannot. */
static ET_NOTRACE int call_bytes(uintptr_t site, uint8_t out[ET_SITE_LEN])
{
	int64_t rel = (int64_t)((intptr_t)(uintptr_t)__fentry__ - (intptr_t)(site + ET_SITE_LEN));
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

/* to_call: nop5 -> call __fentry__; else call __fentry__ -> nop5. */
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
		if (*s && call_bytes(*s, call)) {
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

ET_NOTRACE int et_trace_start(void *buf, size_t bytes, uint64_t tsc_khz,
			      struct et_trace_info *info)
{
	struct et_trace_info local;
	struct et_ring *r = buf;
	int64_t res;

	if (!info)
		info = &local;
	info->handoff_result = ET_HC_NO_VMM;
	info->sites = info->patched = info->skipped = 0;
	/* One handoff per boot: the VMM refuses a second one too. */
	if (et_ring_active)
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
	/* A VMM that answered must have left the ring's shape alone. */
	if (r->magic != ET_RING_MAGIC || r->record_size != sizeof(struct et_ring_record) ||
	    (uint64_t)r->capacity * sizeof(struct et_ring_record) > bytes - sizeof(*r))
		return ET_E_INVAL;

	/* Recording first, then the sites: every call a patched site makes
	 * is one tracing is on for. */
	et_ring_active = r;
	et_fentry_ring = r;
	__asm__ volatile("" : : : "memory");
	et_tracing = 1;
	patch_all(1, info);
	return 0;
}

ET_NOTRACE int et_trace_stop(struct et_trace_info *info)
{
	struct et_trace_info local;

	if (!info)
		info = &local;
	struct et_ring *r = et_ring_active;
	uint64_t head;

	if (!et_tracing)
		return ET_E_STATE;
	patch_all(0, info);
	et_fentry_ring = (struct et_ring *)et_ring_sink;
	__asm__ volatile("" : : : "memory");
	et_tracing = 0;
	/* The writer does not count what it overwrote (abi.h): say it now. */
	head = r->head;
	r->lost = head > r->capacity ? head - r->capacity : 0;
	return 0;
}
