/* SPDX-License-Identifier: MIT */
/* A guestlib guest's handoff (handoff.h): the hypercall port, and the
 * guest's rings read into the trace. */
#include "vmm/trace/handoff.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "earlytrace/abi.h"
#include "vmm/trace/flight_recorder.h"
#include "vmm/trace/handoff_symbol.h"
#include "vmm/util/printable.h"

#define MARK_MAX 256

/*
 * A refused hypercall: counted, and the first one's reason is kept for the
 * summary (tracer_print_summary) and marked in the trace. A guest may send any
 * number (a flood costs it one exit each), so later ones are only counted.
 * Returns `code` for the guest's result field.
 */
__attribute__((format(printf, 3, 4))) static int64_t refuse(struct handoff *h, int64_t code,
							   const char *fmt, ...)
{
	va_list ap;
	char text[sizeof(h->first_refusal) + 64];

	if (h->bad_hypercalls++)
		return code;
	va_start(ap, fmt);
	vsnprintf(h->first_refusal, sizeof(h->first_refusal), fmt, ap);
	va_end(ap);
	snprintf(text, sizeof(text), "hypercall refused: %s (later refusals are only counted)",
		 h->first_refusal);
	recorder_mark_now(h->rec, text);
	return code;
}

static bool overlaps(uint64_t a, uint64_t a_len, uint64_t b, uint64_t b_len)
{
	return a < b + b_len && b < a + a_len;
}

/* The ring header and its record array, if the guest's description holds;
 * *capacity: its capacity as checked, to use instead of the header's,
 * which the guest (another vCPU) may change at any time. */
static struct et_ring *ring_at(const struct handoff *h, uint64_t paddr, uint64_t bytes,
			       uint32_t *capacity)
{
	struct et_ring *ring;
	uint32_t cap;

	/* A misaligned ring is refused: its fields are accessed in place. */
	if (bytes < sizeof(*ring) || bytes > h->gm->size || paddr % _Alignof(struct et_ring))
		return NULL;
	ring = guest_mem_ptr(h->gm, paddr, bytes);
	if (!ring)
		return NULL;
	cap = __atomic_load_n(&ring->capacity, __ATOMIC_RELAXED);
	if (ring->magic != ET_RING_MAGIC || ring->abi_version < ET_ABI_VERSION_OLDEST ||
	    ring->abi_version > ET_ABI_VERSION ||
	    ring->record_size != sizeof(struct et_ring_record) || cap == 0 ||
	    cap > (bytes - sizeof(*ring)) / sizeof(struct et_ring_record))
		return NULL;
	*capacity = cap;
	return ring;
}

/*
 * Checks every ring the guest hands over (in RAM, a valid header, clear of
 * the trampoline region and of each other) before anything changes: a
 * refusal leaves the VMM tracing as before. n >= 1; rings and caps get the
 * checked rings.
 */
static int64_t check_rings(struct handoff *h, const struct et_ring_ref *refs, unsigned n,
			   bool per_cpu, struct et_ring **rings, uint32_t *caps)
{
	char who[32] = "";

	for (unsigned i = 0; i < n; i++) {
		uint64_t paddr = refs[i].paddr, bytes = refs[i].bytes;

		if (per_cpu)
			snprintf(who, sizeof(who), " for CPU %u", i);
		rings[i] = ring_at(h, paddr, bytes, &caps[i]);
		if (!rings[i])
			return refuse(h, ET_E_INVAL,
				      "handoff: no valid ring at 0x%" PRIx64 " (%" PRIu64 " bytes)%s",
				      paddr, bytes, who);
		/* The trampolines run in their region until the handoff, which
		 * puts the region's own bytes back: a ring there would be wiped
		 * under the guest (ring_at checked the range lies in RAM: no
		 * overflow here). */
		if (h->tramp && h->tramp->installed &&
		    overlaps(paddr, bytes, h->tramp->region.paddr, h->tramp->region.size))
			return refuse(h, ET_E_INVAL,
				      "handoff: ring at 0x%" PRIx64 " (%" PRIu64
				      " bytes)%s overlaps the trampoline region",
				      paddr, bytes, who);
		/* Two CPUs writing one ring would tear each other's records,
		 * and the VMM would read them twice. */
		for (unsigned j = 0; j < i; j++)
			if (overlaps(paddr, bytes, refs[j].paddr, refs[j].bytes))
				return refuse(h, ET_E_INVAL,
					      "handoff: the rings of CPUs %u and %u overlap", j, i);
	}
	return 0;
}

/*
 * The handoff proper, for one ring (per_cpu false: every early event goes
 * to it, and its guest events are the boot vCPU's) or one per CPU (ring i
 * is vCPU i's; an early event goes to its vCPU's ring, or ring 0 when that
 * vCPU has none).
 */
static int64_t do_handoff(struct handoff *h, const struct et_ring_ref *refs, unsigned n,
			  bool per_cpu)
{
	const struct host_buffer *buf = &h->rec->buf;
	struct et_ring *rings[VM_MAX_VCPUS];
	uint32_t caps[VM_MAX_VCPUS];
	uint64_t filled[VM_MAX_VCPUS] = { 0 }, skipped[VM_MAX_VCPUS] = { 0 };
	uint64_t copied = 0, not_copied = 0;
	int64_t res;
	char text[200];

	if (h->done)
		return refuse(h, ET_E_STATE, "handoff: tracing was handed over already");
	res = check_rings(h, refs, n, per_cpu, rings, caps);
	if (res)
		return res;

	h->done = true;
	h->ops->stop_capture(h->ctx, "guest ring");
	/* The oldest calls first, as many as fit; the rest are counted. The
	 * ring holds calls only (its ABI): returns and VM exits stay in the
	 * trace file. */
	for (size_t i = 0; i < buf->count; i++) {
		const struct et_ring_record *ev = host_buffer_at(buf, i);
		uint32_t c = per_cpu ? et_rec_cpu(ev) : 0;

		if (et_rec_kind(ev) != ET_REC_CALL)
			continue;
		if (c >= n)
			c = 0;
		if (filled[c] < caps[c])
			rings[c]->records[filled[c]++] = *ev;
		else
			skipped[c]++;
	}
	for (unsigned i = 0; i < n; i++) {
		struct guest_ring *g = &h->rings[i];

		rings[i]->head = filled[i];
		rings[i]->lost = 0;
		rings[i]->vmm_events = filled[i];
		rings[i]->vmm_dropped = skipped[i] + (i == 0 ? buf->dropped : 0);
		if (!rings[i]->tsc_khz)
			rings[i]->tsc_khz = h->rec->tsc_khz;
		g->paddr = refs[i].paddr;
		g->bytes = refs[i].bytes;
		g->next = filled[i]; /* the early events are in the trace already */
		g->cpu = per_cpu ? i : h->rec->vcpu ? h->rec->vcpu->id : 0;
		copied += filled[i];
		not_copied += skipped[i];
	}
	h->nr_rings = n;
	/* The guest records without exits now: its head is its progress (the
	 * boot CPU's ring's, for the hang watchdog). */
	if (h->fr)
		flight_recorder_watch_ring(h->fr, &rings[0]->head);
	if (per_cpu)
		snprintf(text, sizeof(text),
			 "handoff: guest rings of %u CPUs (CPU 0's at 0x%" PRIx64 ", %u records), %" PRIu64
			 " early events copied, %" PRIu64 " did not fit",
			 n, refs[0].paddr, caps[0], copied, not_copied);
	else
		snprintf(text, sizeof(text),
			 "handoff: guest ring at 0x%" PRIx64 " (%u records), %" PRIu64
			 " early events copied, %" PRIu64 " did not fit",
			 refs[0].paddr, caps[0], copied, not_copied);
	recorder_mark_now(h->rec, text);
	if (h->ops->guest_ring_start)
		h->ops->guest_ring_start(h->ctx);
	return 0;
}

/* ET_HC_HANDOFF_PERCPU: the guest's array of rings, copied out of guest
 * memory first (another vCPU may change it while we look). */
static int64_t do_handoff_percpu(struct handoff *h, uint64_t paddr, uint64_t count)
{
	struct et_ring_ref refs[VM_MAX_VCPUS];
	unsigned vcpus = h->nr_vcpus;
	const void *array;

	if (h->done)
		return refuse(h, ET_E_STATE, "handoff: tracing was handed over already");
	if (count == 0 || count > vcpus)
		return refuse(h, ET_E_INVAL,
			      "handoff: %" PRIu64 " per-CPU rings for %u vCPUs (1 to %u allowed)",
			      count, vcpus, vcpus);
	array = paddr % _Alignof(struct et_ring_ref)
			? NULL
			: guest_mem_ptr(h->gm, paddr, count * sizeof(struct et_ring_ref));
	if (!array)
		return refuse(h, ET_E_INVAL,
			      "handoff: the array of %" PRIu64 " rings at 0x%" PRIx64
			      " is not in guest RAM or not aligned",
			      count, paddr);
	memcpy(refs, array, count * sizeof(struct et_ring_ref));
	return do_handoff(h, refs, (unsigned)count, true);
}

static int64_t do_mark(struct handoff *h, uint64_t paddr)
{
	const char *text = guest_mem_ptr(h->gm, paddr, 1);
	char copy[MARK_MAX + 1];
	size_t len = 0;

	if (!text)
		return refuse(h, ET_E_INVAL, "mark: string at 0x%" PRIx64 " is not in guest RAM",
			      paddr);
	/* Copy byte by byte through the bounds check: the string may end at
	 * the edge of RAM. */
	while (len < MARK_MAX) {
		const char *c = guest_mem_ptr(h->gm, paddr + len, 1);

		if (!c)
			return refuse(h, ET_E_INVAL,
				      "mark: string at 0x%" PRIx64 " runs past the end of guest RAM",
				      paddr);
		if (!*c)
			break;
		copy[len++] = printable_ascii((unsigned char)*c) ? *c : '?';
	}
	if (len == MARK_MAX)
		return refuse(h, ET_E_INVAL,
			      "mark: string at 0x%" PRIx64 " is longer than %d bytes", paddr,
			      MARK_MAX - 1);
	copy[len] = '\0';
	recorder_mark_now(h->rec, copy);
	return 0;
}

static void hypercall_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len,
			 bool is_write)
{
	struct handoff *h = opaque;
	struct et_hypercall *hc;
	uint32_t paddr = 0;

	(void)offset;
	if (!is_write) {
		memset(data, 0, len);
		return;
	}
	h->hypercalls++;
	memcpy(&paddr, data, len < 4 ? len : 4);
	/* Misaligned blocks are refused like unmapped ones (fuzzing found
	 * them: the fields are accessed in place, so they must be aligned). */
	hc = len == 4 && paddr % _Alignof(struct et_hypercall) == 0
		     ? guest_mem_ptr(h->gm, paddr, sizeof(*hc))
		     : NULL;
	if (!hc) {
		/* Nowhere to write a result. */
		if (len != 4)
			refuse(h, 0, "a %u-byte write to the port (it takes a 32-bit address)", len);
		else
			refuse(h, 0, "block at 0x%" PRIx32 " is not in guest RAM or not aligned",
			       paddr);
		return;
	}
	if (hc->abi_version < ET_ABI_VERSION_OLDEST || hc->abi_version > ET_ABI_VERSION)
		hc->result = refuse(h, ET_E_VERSION,
				    "ABI version %" PRIu32 " (this VMM speaks %d to %d)",
				    hc->abi_version, ET_ABI_VERSION_OLDEST, ET_ABI_VERSION);
	else if (hc->nr == ET_HC_HANDOFF) {
		const struct et_ring_ref one = { hc->arg0, hc->arg1 };

		hc->result = do_handoff(h, &one, 1, false);
	} else if (hc->nr == ET_HC_HANDOFF_PERCPU && hc->abi_version >= 3)
		hc->result = do_handoff_percpu(h, hc->arg0, hc->arg1);
	else if (hc->nr == ET_HC_MARK)
		hc->result = do_mark(h, hc->arg0);
	else
		hc->result = refuse(h, ET_E_INVAL, "unknown hypercall %" PRIu32, hc->nr);
}

int handoff_attach(struct handoff *h, const struct handoff_config *cfg)
{
	memset(h, 0, sizeof(*h));
	h->rec = cfg->rec;
	h->nr_vcpus = cfg->nr_vcpus == 0 ? 1
		      : cfg->nr_vcpus > VM_MAX_VCPUS ? VM_MAX_VCPUS
						     : cfg->nr_vcpus;
	h->fr = cfg->fr;
	h->gm = &cfg->vm->mem;
	h->tramp = cfg->tramp;
	h->ops = cfg->ops;
	h->ctx = cfg->ctx;
	h->vcpu = cfg->vcpu;
	h->symbol = cfg->symbol;
	h->follow = cfg->follow;
	if (iobus_register(&cfg->vm->bus, IOBUS_PIO, ET_PORT_HYPERCALL, 4, hypercall_io, h,
			   "earlytrace hypercall"))
		return -1;
	return handoff_symbol_attach(h, cfg->syms);
}

/* A ring the guest broke: reading it stops, and the trace says why. */
static void ring_gone(struct handoff *h, struct guest_ring *g, const char *why)
{
	char text[128], who[24] = "";

	g->broken = true;
	if (h->nr_rings > 1)
		snprintf(who, sizeof(who), " (vCPU %u's)", g->cpu);
	snprintf(text, sizeof(text), "guest ring%s %s: its later events are lost", who, why);
	recorder_mark(h->rec, 0, text);
}

/* The oldest of the ring's unread records [next, head) still in it, with
 * `keep` records kept at most (head >= next). */
static uint64_t first_unread(const struct guest_ring *g, uint64_t head, uint64_t keep)
{
	return head - g->next > keep ? head - keep : g->next;
}

/* Reads one ring's new records (see handoff_read_guest_ring). */
static void read_one_ring(struct handoff *h, struct guest_ring *g, bool final)
{
	struct et_ring *ring;
	uint64_t head, start, incomplete = 0;
	uint32_t cap;

	if (g->broken)
		return;
	/* The guest may have scribbled on the header since: check it again. */
	ring = ring_at(h, g->paddr, g->bytes, &cap);
	if (!ring) {
		ring_gone(h, g, "header corrupted");
		return;
	}
	head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
	if (head < g->next) {
		ring_gone(h, g, "head went backwards");
		return;
	}
	/* Records [next, head) are new; the ring keeps the last `capacity`,
	 * so older ones were overwritten before this read. */
	start = first_unread(g, head, cap);
	if (start > g->next) {
		h->guest_overwritten += start - g->next;
		h->guest_lost += start - g->next;
		trace_writer_drops(h->rec->out, h->guest_overwritten, 0,
				   "overwritten in the guest ring");
	}
	for (uint64_t i = start; i < head; i++) {
		struct et_ring_record *slot = &ring->records[i % cap];
		struct et_ring_record ev;
		uint32_t before, after;

		/* A record is complete only once its writer stored its index in
		 * cpu, last (abi.h): the vCPU may have stopped in the middle of
		 * one, or a later lap be rewriting its slot, now or (another
		 * vCPU running) while we copy it: look before and after. */
		before = __atomic_load_n(&slot->cpu, __ATOMIC_ACQUIRE);
		memcpy(&ev, slot, sizeof(ev));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		after = __atomic_load_n(&slot->cpu, __ATOMIC_RELAXED);
		if (before != (uint32_t)i || after != before) {
			if (!final) {
				head = i; /* read it next time */
				break;
			}
			incomplete++;
			continue;
		}
		/* A guest records calls on its ring's CPU, nothing else,
		 * whatever it wrote. */
		ev.cpu = g->cpu;
		ev.kind = ET_REC_CALL;
		ev.flags = ET_REC_SRC_GUEST;
		if (h->fr)
			flight_recorder_add_guest(h->fr, &ev);
		trace_writer_events(h->rec->out, &ev, 1);
		h->guest_events++;
	}
	g->next = head;
	if (incomplete) {
		h->guest_incomplete += incomplete;
		h->guest_lost += incomplete;
		trace_writer_drops(h->rec->out, h->guest_incomplete, 0,
				   "incomplete in the guest ring (being written when the run ended)");
	}
}

void handoff_read_guest_ring(struct handoff *h, bool final)
{
	for (unsigned i = 0; i < h->nr_rings; i++)
		read_one_ring(h, &h->rings[i], final);
}

/* Records handoff_guest_tscs() looks at in a ring at most. */
#define GUEST_TSCS_MAX 65536u

size_t handoff_guest_tscs(const struct handoff *h, unsigned cpu, uint64_t lo, uint64_t hi,
			  uint64_t *out, size_t max)
{
	size_t n = 0;

	for (unsigned r = 0; r < h->nr_rings; r++) {
		const struct guest_ring *g = &h->rings[r];
		struct et_ring *ring;
		uint64_t head;
		uint32_t cap;

		if (g->broken || g->cpu != cpu || !(ring = ring_at(h, g->paddr, g->bytes, &cap)))
			continue;
		head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
		/* The unread records, the newest GUEST_TSCS_MAX at most: a
		 * wait's placement is not worth a walk over a huge ring. */
		if (head < g->next)
			continue;
		for (uint64_t i = first_unread(g, head, cap < GUEST_TSCS_MAX ? cap : GUEST_TSCS_MAX);
		     i < head; i++) {
			const struct et_ring_record *slot = &ring->records[i % cap];
			uint64_t tsc = slot->tsc;

			/* Complete (abi.h), and a TSC of the run: anything else
			 * the guest wrote can only move a wait within it. */
			if (__atomic_load_n(&slot->cpu, __ATOMIC_ACQUIRE) != (uint32_t)i || tsc < lo ||
			    tsc > hi)
				continue;
			if (n < max)
				out[n] = tsc;
			n++;
		}
	}
	return n;
}
