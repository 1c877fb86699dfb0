/* SPDX-License-Identifier: MIT */
/*
 * trace=ring: the handoff from the VMM to the guest's own tracer, as a test
 * can check it.
 *
 * What the ring must hold afterwards: the VMM's events first (vmm_events of
 * them, copied at the handoff; none without VMM support), then one
 * guest-recorded event per traced call between et_trace_start() and
 * et_trace_stop(). The only ct_* calls in that window are the ones
 * calltree_run("ring") makes, so the per-function counts of guest events
 * must equal its "calltree phase=ring" lines (816 in all, see calltree.c),
 * provided nothing was lost: the ring below holds 8190 records, and the
 * window makes about 1,300 guest events (the call tree, plus print_* and
 * uart_putc for its report lines), which leaves room for a few thousand
 * VMM events from the boot lines and phase=early.
 */
#include "tracering.h"

#include <earlytrace/guestlib.h>

#include "calltree.h"
#include "print.h"

/* The header and 8192 records: guestlib uses a power-of-two count. */
#define RING_BYTES (sizeof(struct et_ring) + 8192 * sizeof(struct et_ring_record))

/* In .bss: inside the image, so et_guest_init's one offset maps it, and
 * physically contiguous. 64-byte aligned so records do not straddle cache
 * lines (header 64 bytes, records 32). */
static uint8_t ring_buf[RING_BYTES] __attribute__((aligned(64)));

static void print_sdec(int64_t v)
{
	if (v < 0) {
		print_str("-");
		v = -v;
	}
	print_dec((uint32_t)v);
}

static void print_kv(const char *key, uint64_t v)
{
	print_str(key);
	print_dec((uint32_t)v);	/* our counts stay far below 2^32 */
}

/* Counts of the ring's ct_* events, and whether timestamps only go up. */
struct ring_counts {
	uint32_t guest[CALLTREE_NR_FNS];
	uint32_t vmm[CALLTREE_NR_FNS];
	uint32_t guest_events;
	uint32_t vmm_events;
	uint32_t incomplete;
	uint32_t tsc_backwards;
};

static void ring_count(const struct et_ring *r, struct ring_counts *c)
{
	/* Oldest first: the ring keeps records head - n .. head - 1. */
	uint64_t head = r->head;
	uint64_t n = head < r->capacity ? head : r->capacity;
	uint64_t last_tsc = 0;
	int any = 0;

	*c = (struct ring_counts){ 0 };
	for (uint64_t j = head - n; j < head; j++) {
		struct et_ring_record rec;
		int guest;

		if (!et_ring_read(r, j, &rec)) {
			c->incomplete++;
			continue;
		}
		guest = (rec.flags & ET_REC_SRC_MASK) == ET_REC_SRC_GUEST;
		if (any && rec.tsc < last_tsc)
			c->tsc_backwards++;
		last_tsc = rec.tsc;
		any = 1;
		if (guest)
			c->guest_events++;
		else
			c->vmm_events++;
		for (unsigned i = 0; i < CALLTREE_NR_FNS; i++) {
			if (rec.ip != calltree_fn_addr(i))
				continue;
			if (guest)
				c->guest[i]++;
			else
				c->vmm[i]++;
		}
	}
}

static void ring_report(const struct et_ring *r)
{
	struct ring_counts c;

	ring_count(r, &c);
	print_kv("ring: head=", r->head);
	print_kv(" lost=", r->lost);
	print_kv(" capacity=", r->capacity);
	print_kv(" guest_events=", c.guest_events);
	print_kv(" vmm_events=", c.vmm_events);
	print_kv(" incomplete=", c.incomplete);
	print_str(c.tsc_backwards ? " tsc=backwards\n" : " tsc=monotonic\n");
	for (unsigned i = 0; i < CALLTREE_NR_FNS; i++) {
		print_str("ring fn=");
		print_str(calltree_fn_name(i));
		print_kv(" calls=", c.guest[i]);
		print_str("\n");
	}
	for (unsigned i = 0; i < CALLTREE_NR_FNS; i++) {
		print_str("ring vmm fn=");
		print_str(calltree_fn_name(i));
		print_kv(" calls=", c.vmm[i]);
		print_str("\n");
	}
}

void tracering_run(int64_t phys_offset)
{
	struct et_trace_info info;
	struct et_ring *r = (struct et_ring *)ring_buf;
	int ret;

	calltree_run("early");

	et_guest_init(phys_offset);
	ret = et_trace_start(ring_buf, sizeof(ring_buf), 0, &info);
	print_str("ring: handoff result=");
	print_sdec(info.handoff_result);
	if (info.handoff_result == ET_HC_NO_VMM)
		print_str(" (no VMM support)");
	print_kv(" vmm_events=", r->vmm_events);
	print_kv(" vmm_dropped=", r->vmm_dropped);
	print_kv(" patched=", info.patched);
	print_kv(" skipped=", info.skipped);
	print_str("\n");
	if (ret) {
		print_str("ring: not started, error ");
		print_sdec(ret);
		print_str("\n");
		return;
	}

	calltree_run("ring");

	et_trace_stop(&info);
	print_kv("ring: stop restored=", info.patched);
	print_kv(" skipped=", info.skipped);
	print_str("\n");
	ring_report(r);
}
