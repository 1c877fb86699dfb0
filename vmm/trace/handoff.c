/* SPDX-License-Identifier: MIT */
#include "vmm/trace/handoff.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "earlytrace/abi.h"
#include "vmm/error.h"
#include "vmm/trace/tracer.h"

#define MARK_MAX 256

/* The ring header and its record array, if the guest's description holds. */
static struct et_ring *ring_at(struct tracer *t, uint64_t paddr, uint64_t bytes)
{
	struct et_ring *ring;

	if (bytes < sizeof(*ring) || bytes > t->m->vm.mem.size)
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
		return ET_E_STATE;
	ring = ring_at(t, paddr, bytes);
	if (!ring)
		return ET_E_INVAL;

	tracer_stop_capture(t, "guest ring");
	/* The oldest events first, as many as fit; the rest are counted. */
	n = t->buf.count < ring->capacity ? t->buf.count : ring->capacity;
	skipped = t->buf.count - n;
	for (uint64_t i = 0; i < n; i++)
		ring->records[i] = *host_buffer_at(&t->buf, (size_t)i);
	ring->head = n;
	ring->lost = 0;
	ring->vmm_events = n;
	ring->vmm_dropped = t->buf.dropped + skipped;
	if (!ring->tsc_khz)
		ring->tsc_khz = t->tsc_khz;

	t->ring_paddr = paddr;
	t->ring_bytes = bytes;
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
		return ET_E_INVAL;
	/* Copy byte by byte through the bounds check: the string may end at
	 * the edge of RAM. */
	while (len < MARK_MAX) {
		const char *c = guest_mem_ptr(&t->m->vm.mem, paddr + len, 1);

		if (!c)
			return ET_E_INVAL;
		if (!*c)
			break;
		copy[len++] = (*c >= 0x20 && *c < 0x7f) ? *c : '?';
	}
	if (len == MARK_MAX)
		return ET_E_INVAL;
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
	hc = len == 4 ? guest_mem_ptr(&t->m->vm.mem, paddr, sizeof(*hc)) : NULL;
	if (!hc) {
		t->bad_hypercalls++;
		return; /* nowhere to write a result */
	}
	if (hc->abi_version != ET_ABI_VERSION)
		hc->result = ET_E_VERSION;
	else if (hc->nr == ET_HC_HANDOFF)
		hc->result = do_handoff(t, hc->arg0, hc->arg1);
	else if (hc->nr == ET_HC_MARK)
		hc->result = do_mark(t, hc->arg0);
	else
		hc->result = ET_E_INVAL;
	if (hc->result)
		t->bad_hypercalls++;
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

	if (!t->ring_paddr)
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

		ev.flags = (uint16_t)((ev.flags & ~ET_REC_SRC_MASK) | ET_REC_SRC_GUEST);
		trace_writer_events(t->out, &ev, 1);
		t->guest_events++;
	}
}
