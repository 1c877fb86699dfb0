/* SPDX-License-Identifier: MIT */
#include "vmm/trace/handoff.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "earlytrace/abi.h"
#include "vmm/error.h"
#include "vmm/trace/tracer.h"

#define MARK_MAX 256

/*
 * A refused hypercall: counted, and the first one's reason is kept for the
 * summary (handoff_report) and marked in the trace. A guest may send any
 * number (a flood costs it one exit each), so later ones are only counted.
 * Returns `code` for the guest's result field.
 */
__attribute__((format(printf, 3, 4))) static int64_t refuse(struct tracer *t, int64_t code,
							   const char *fmt, ...)
{
	va_list ap;
	char text[sizeof(t->hc_first_refusal) + 64];

	if (t->bad_hypercalls++)
		return code;
	va_start(ap, fmt);
	vsnprintf(t->hc_first_refusal, sizeof(t->hc_first_refusal), fmt, ap);
	va_end(ap);
	snprintf(text, sizeof(text), "hypercall refused: %s (later refusals are only counted)",
		 t->hc_first_refusal);
	trace_writer_mark(t->out, tracer_guest_tsc(&t->m->vcpu), text);
	return code;
}

static bool overlaps(uint64_t a, uint64_t a_len, uint64_t b, uint64_t b_len)
{
	return a < b + b_len && b < a + a_len;
}

/* The ring header and its record array, if the guest's description holds. */
static struct et_ring *ring_at(struct tracer *t, uint64_t paddr, uint64_t bytes)
{
	struct et_ring *ring;

	/* A misaligned ring is refused: its fields are accessed in place. */
	if (bytes < sizeof(*ring) || bytes > t->m->vm.mem.size ||
	    paddr % _Alignof(struct et_ring))
		return NULL;
	ring = guest_mem_ptr(&t->m->vm.mem, paddr, bytes);
	if (!ring || ring->magic != ET_RING_MAGIC || ring->abi_version != ET_ABI_VERSION ||
	    ring->record_size != sizeof(struct et_ring_record) || ring->capacity == 0 ||
	    ring->capacity > (bytes - sizeof(*ring)) / sizeof(struct et_ring_record))
		return NULL;
	return ring;
}

static int64_t do_handoff(struct tracer *t, uint64_t paddr, uint64_t bytes)
{
	struct et_ring *ring;
	uint64_t n, skipped;
	char text[160];

	if (t->handed_off)
		return refuse(t, ET_E_STATE, "handoff: tracing was handed over already");
	ring = ring_at(t, paddr, bytes);
	if (!ring)
		return refuse(t, ET_E_INVAL,
			      "handoff: no valid ring at 0x%" PRIx64 " (%" PRIu64 " bytes)", paddr,
			      bytes);
	/* The trampolines run in their region until the handoff, which puts
	 * the region's own bytes back: a ring there would be wiped under the
	 * guest (ring_at checked the range lies in RAM: no overflow here). */
	if (t->tramp.installed &&
	    overlaps(paddr, bytes, t->tramp.region.paddr, t->tramp.region.size))
		return refuse(t, ET_E_INVAL,
			      "handoff: ring at 0x%" PRIx64 " (%" PRIu64
			      " bytes) overlaps the trampoline region",
			      paddr, bytes);

	tracer_stop_capture(t, "guest ring");
	/* The oldest calls first, as many as fit; the rest are counted. The
	 * ring holds calls only (its ABI): returns and VM exits stay in the
	 * trace file. */
	n = skipped = 0;
	for (size_t i = 0; i < t->buf.count; i++) {
		const struct et_ring_record *ev = host_buffer_at(&t->buf, i);

		if (et_rec_kind(ev) != ET_REC_CALL)
			continue;
		if (n < ring->capacity)
			ring->records[n++] = *ev;
		else
			skipped++;
	}
	ring->head = n;
	ring->lost = 0;
	ring->vmm_events = n;
	ring->vmm_dropped = t->buf.dropped + skipped;
	if (!ring->tsc_khz)
		ring->tsc_khz = t->tsc_khz;

	t->ring_paddr = paddr;
	t->ring_bytes = bytes;
	/* The guest records without exits now: its head is its progress. */
	flight_recorder_watch(&t->fr, 1, &ring->head);
	t->ring_vmm_events = n;
	snprintf(text, sizeof(text),
		 "handoff: guest ring at 0x%" PRIx64 " (%u records), %" PRIu64
		 " early events copied, %" PRIu64 " did not fit",
		 paddr, ring->capacity, n, skipped);
	trace_writer_mark(t->out, tracer_guest_tsc(&t->m->vcpu), text);
	return 0;
}

static int64_t do_mark(struct tracer *t, uint64_t paddr)
{
	const char *text = guest_mem_ptr(&t->m->vm.mem, paddr, 1);
	char copy[MARK_MAX + 1];
	size_t len = 0;

	if (!text)
		return refuse(t, ET_E_INVAL, "mark: string at 0x%" PRIx64 " is not in guest RAM",
			      paddr);
	/* Copy byte by byte through the bounds check: the string may end at
	 * the edge of RAM. */
	while (len < MARK_MAX) {
		const char *c = guest_mem_ptr(&t->m->vm.mem, paddr + len, 1);

		if (!c)
			return refuse(t, ET_E_INVAL,
				      "mark: string at 0x%" PRIx64 " runs past the end of guest RAM",
				      paddr);
		if (!*c)
			break;
		copy[len++] = (*c >= 0x20 && *c < 0x7f) ? *c : '?';
	}
	if (len == MARK_MAX)
		return refuse(t, ET_E_INVAL,
			      "mark: string at 0x%" PRIx64 " is longer than %d bytes", paddr,
			      MARK_MAX - 1);
	copy[len] = '\0';
	trace_writer_mark(t->out, tracer_guest_tsc(&t->m->vcpu), copy);
	return 0;
}

static void hypercall_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len,
			 bool is_write)
{
	struct tracer *t = opaque;
	struct et_hypercall *hc;
	uint32_t paddr = 0;

	(void)offset;
	if (!is_write) {
		memset(data, 0, len);
		return;
	}
	t->hypercalls++;
	memcpy(&paddr, data, len < 4 ? len : 4);
	/* Misaligned blocks are refused like unmapped ones (fuzzing found
	 * them: the fields are accessed in place, so they must be aligned). */
	hc = len == 4 && paddr % _Alignof(struct et_hypercall) == 0
		     ? guest_mem_ptr(&t->m->vm.mem, paddr, sizeof(*hc))
		     : NULL;
	if (!hc) {
		/* Nowhere to write a result. */
		if (len != 4)
			refuse(t, 0, "a %u-byte write to the port (it takes a 32-bit address)", len);
		else
			refuse(t, 0, "block at 0x%" PRIx32 " is not in guest RAM or not aligned",
			       paddr);
		return;
	}
	if (hc->abi_version != ET_ABI_VERSION)
		hc->result = refuse(t, ET_E_VERSION, "ABI version %" PRIu32 " (this VMM speaks %d)",
				    hc->abi_version, ET_ABI_VERSION);
	else if (hc->nr == ET_HC_HANDOFF)
		hc->result = do_handoff(t, hc->arg0, hc->arg1);
	else if (hc->nr == ET_HC_MARK)
		hc->result = do_mark(t, hc->arg0);
	else
		hc->result = refuse(t, ET_E_INVAL, "unknown hypercall %" PRIu32, hc->nr);
}

void handoff_report(const struct tracer *t)
{
	if (t->bad_hypercalls)
		fprintf(stderr,
			"earlytrace: hypercalls: %" PRIu64 ", %" PRIu64 " refused (the first: %s)\n",
			t->hypercalls, t->bad_hypercalls, t->hc_first_refusal);
}

int handoff_attach(struct tracer *t)
{
	return iobus_register(&t->m->vm.bus, IOBUS_PIO, ET_PORT_HYPERCALL, 4, hypercall_io, t,
			      "earlytrace hypercall");
}

void handoff_collect_guest_ring(struct tracer *t)
{
	struct et_ring *ring;
	uint64_t head, first, start;

	/* ring_bytes, not ring_paddr: a ring at guest-physical 0 is valid. */
	if (!t->ring_bytes)
		return;
	/* The guest may have scribbled on the header since: check it again. */
	ring = ring_at(t, t->ring_paddr, t->ring_bytes);
	if (!ring) {
		trace_writer_mark(t->out, 0, "guest ring header corrupted: its events are lost");
		return;
	}
	head = ring->head;
	if (head < t->ring_vmm_events) {
		trace_writer_mark(t->out, 0, "guest ring head went backwards: its events are lost");
		return;
	}
	/* Records [first, head) are the guest's; the ring keeps the last
	 * `capacity`, so older ones were overwritten. */
	first = t->ring_vmm_events;
	start = head - first > ring->capacity ? head - ring->capacity : first;
	t->guest_lost = start - first;
	if (t->guest_lost)
		trace_writer_drops(t->out, t->guest_lost, 0, "overwritten in the guest ring");
	for (uint64_t i = start; i < head; i++) {
		struct et_ring_record ev = ring->records[i % ring->capacity];

		/* A guest records calls, nothing else, whatever it wrote. */
		ev.kind = ET_REC_CALL;
		ev.flags = ET_REC_SRC_GUEST;
		flight_recorder_add_guest(&t->fr, &ev);
		trace_writer_events(t->out, &ev, 1);
		t->guest_events++;
	}
}
