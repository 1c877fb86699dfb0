/* SPDX-License-Identifier: MIT */
#include "vmm/trace/handoff.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "earlytrace/abi.h"
#include "vmm/error.h"
#include "vmm/machine.h"
#include "vmm/trace/flight_recorder.h"

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

/* The ring header and its record array, if the guest's description holds. */
static struct et_ring *ring_at(struct handoff *h, uint64_t paddr, uint64_t bytes)
{
	struct et_ring *ring;

	/* A misaligned ring is refused: its fields are accessed in place. */
	if (bytes < sizeof(*ring) || bytes > h->gm->size || paddr % _Alignof(struct et_ring))
		return NULL;
	ring = guest_mem_ptr(h->gm, paddr, bytes);
	if (!ring || ring->magic != ET_RING_MAGIC || ring->abi_version != ET_ABI_VERSION ||
	    ring->record_size != sizeof(struct et_ring_record) || ring->capacity == 0 ||
	    ring->capacity > (bytes - sizeof(*ring)) / sizeof(struct et_ring_record))
		return NULL;
	return ring;
}

static int64_t do_handoff(struct handoff *h, uint64_t paddr, uint64_t bytes)
{
	const struct host_buffer *buf = &h->rec->buf;
	struct et_ring *ring;
	uint64_t n, skipped;
	char text[160];

	if (h->done)
		return refuse(h, ET_E_STATE, "handoff: tracing was handed over already");
	ring = ring_at(h, paddr, bytes);
	if (!ring)
		return refuse(h, ET_E_INVAL,
			      "handoff: no valid ring at 0x%" PRIx64 " (%" PRIu64 " bytes)", paddr,
			      bytes);
	/* The trampolines run in their region until the handoff, which puts
	 * the region's own bytes back: a ring there would be wiped under the
	 * guest (ring_at checked the range lies in RAM: no overflow here). */
	if (h->tramp && h->tramp->installed &&
	    overlaps(paddr, bytes, h->tramp->region.paddr, h->tramp->region.size))
		return refuse(h, ET_E_INVAL,
			      "handoff: ring at 0x%" PRIx64 " (%" PRIu64
			      " bytes) overlaps the trampoline region",
			      paddr, bytes);

	h->done = true;
	h->ops->stop_capture(h->ctx, "guest ring");
	/* The oldest calls first, as many as fit; the rest are counted. The
	 * ring holds calls only (its ABI): returns and VM exits stay in the
	 * trace file. */
	n = skipped = 0;
	for (size_t i = 0; i < buf->count; i++) {
		const struct et_ring_record *ev = host_buffer_at(buf, i);

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
	ring->vmm_dropped = buf->dropped + skipped;
	if (!ring->tsc_khz)
		ring->tsc_khz = h->rec->tsc_khz;

	h->ring_paddr = paddr;
	h->ring_bytes = bytes;
	/* The guest records without exits now: its head is its progress. */
	if (h->fr)
		flight_recorder_watch_ring(h->fr, &ring->head);
	h->ring_vmm_events = n;
	h->ring_next = n; /* the early events are in the trace already */
	snprintf(text, sizeof(text),
		 "handoff: guest ring at 0x%" PRIx64 " (%u records), %" PRIu64
		 " early events copied, %" PRIu64 " did not fit",
		 paddr, ring->capacity, n, skipped);
	recorder_mark_now(h->rec, text);
	if (h->ops->guest_ring_start)
		h->ops->guest_ring_start(h->ctx);
	return 0;
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
		copy[len++] = (*c >= 0x20 && *c < 0x7f) ? *c : '?';
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
	if (hc->abi_version != ET_ABI_VERSION)
		hc->result = refuse(h, ET_E_VERSION, "ABI version %" PRIu32 " (this VMM speaks %d)",
				    hc->abi_version, ET_ABI_VERSION);
	else if (hc->nr == ET_HC_HANDOFF)
		hc->result = do_handoff(h, hc->arg0, hc->arg1);
	else if (hc->nr == ET_HC_MARK)
		hc->result = do_mark(h, hc->arg0);
	else
		hc->result = refuse(h, ET_E_INVAL, "unknown hypercall %" PRIu32, hc->nr);
}

/* Where ftrace begins patching code, first name found: each step of
 * ftrace_run_update_code() in 6.1 (the first checks every site before
 * it changes one). */
static const char *const patch_symbols[] = {
	"ftrace_arch_code_modify_prepare",
	"ftrace_run_update_code",
	"arch_ftrace_update_code",
	"ftrace_modify_all_code",
	"ftrace_replace_code",
};

__attribute__((format(printf, 2, 3))) static void mark(struct handoff *h, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	recorder_mark_now(h->rec, text);
}

static void on_handoff_symbol(void *ctx, struct vcpu *vcpu, unsigned slot);

/* --follow's steps at each breakpoint (see handoff.h). */
static void follow_step(struct handoff *h, struct vcpu *vcpu, unsigned slot)
{
	size_t n;

	switch (h->phase) {
	case FOLLOW_NONE:
		/* ftrace_init: it checks every site holds `call __fentry__`. */
		n = h->ops->stop_capture(h->ctx, h->symbol);
		mark(h, "follow: %s reached, %zu sites restored for it; capture resumes "
				 "when it returns",
			      h->symbol, n);
		h->phase = FOLLOW_RESUMING;
		if (guest_debug_set_hw(vcpu, slot, h->resume_addr, on_handoff_symbol, h) == 0)
			return;
		break;
	case FOLLOW_RESUMING:
		n = h->ops->resume_capture(h->ctx);
		mark(h, "follow: capture resumed at %s on %zu sites", "early_trace_init", n);
		h->phase = FOLLOW_CAPTURING;
		if (guest_debug_set_hw(vcpu, slot, h->patch_addr, on_handoff_symbol, h) == 0)
			return;
		break;
	case FOLLOW_CAPTURING:
		n = h->ops->stop_capture(h->ctx, "ftrace");
		mark(h, "handoff: ftrace begins patching code (%s), %zu sites restored; "
				 "the kernel's ftrace ring is read from here",
			      h->patch_symbol, n);
		break;
	case FOLLOW_KERNEL:
		break;
	}
	/* The kernel's tracer takes over (also when a breakpoint could not
	 * be moved: capture is stopped then, never left in ftrace's way). */
	if (h->phase != FOLLOW_KERNEL) {
		h->ops->stop_capture(h->ctx, "ftrace");
		h->phase = FOLLOW_KERNEL;
		h->ops->follow_start(h->ctx);
	}
	guest_debug_set_hw(vcpu, slot, 0, NULL, NULL);
}

/* A stock kernel reached the handoff symbol: its own tracer is about to
 * inspect the sites, so they must be exactly as built. */
static void on_handoff_symbol(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct handoff *h = ctx;
	size_t restored;

	h->done = true;
	if (h->follow) {
		follow_step(h, vcpu, slot);
		return;
	}
	restored = h->ops->stop_capture(h->ctx, h->symbol);
	mark(h, "handoff: %s reached, %zu sites restored", h->symbol, restored);
	guest_debug_set_hw(vcpu, slot, 0, NULL, NULL);
}

/* --follow needs the kernel's code-patching entry: without it capture
 * would still be armed when ftrace checks the sites. */
static int find_follow_symbols(struct handoff *h, const struct symbols *syms)
{
	if (symbols_addr(syms, "early_trace_init", &h->resume_addr))
		return et_error("--follow: no symbol early_trace_init in this kernel (not a "
				"Linux with ftrace?)");
	for (size_t i = 0; i < sizeof(patch_symbols) / sizeof(patch_symbols[0]); i++)
		if (symbols_addr(syms, patch_symbols[i], &h->patch_addr) == 0) {
			h->patch_symbol = patch_symbols[i];
			return 0;
		}
	return et_error("--follow: this kernel has none of the symbols where ftrace patches "
			"code (%s, ...)",
			patch_symbols[0]);
}

int handoff_attach(struct handoff *h, const struct handoff_config *cfg)
{
	uint64_t addr;

	memset(h, 0, sizeof(*h));
	h->rec = cfg->rec;
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
	if (h->follow && (!h->symbol || symbols_addr(cfg->syms, h->symbol, &addr)))
		return et_error("--follow: no handoff symbol '%s' in this kernel",
				h->symbol ? h->symbol : "(none)");
	if (h->follow && find_follow_symbols(h, cfg->syms))
		return -1;
	/* A kernel without the handoff symbol simply keeps the breakpoints
	 * until it hands off through guestlib, or the run ends. */
	if (h->symbol && symbols_addr(cfg->syms, h->symbol, &addr) == 0 &&
	    guest_debug_set_hw(cfg->vcpu, MACHINE_HW_BP_HANDOFF, addr, on_handoff_symbol, h))
		return -1;
	return 0;
}

void handoff_read_guest_ring(struct handoff *h, bool final)
{
	struct et_ring *ring;
	uint64_t head, start, incomplete = 0;

	/* ring_bytes, not ring_paddr: a ring at guest-physical 0 is valid. */
	if (!h->ring_bytes || h->ring_broken)
		return;
	/* The guest may have scribbled on the header since: check it again. */
	ring = ring_at(h, h->ring_paddr, h->ring_bytes);
	if (!ring) {
		h->ring_broken = true;
		recorder_mark(h->rec, 0, "guest ring header corrupted: its later events are lost");
		return;
	}
	head = ring->head;
	if (head < h->ring_next) {
		h->ring_broken = true;
		recorder_mark(h->rec, 0, "guest ring head went backwards: its later events are lost");
		return;
	}
	/* Records [ring_next, head) are new; the ring keeps the last
	 * `capacity`, so older ones were overwritten before this read. */
	start = head - h->ring_next > ring->capacity ? head - ring->capacity : h->ring_next;
	if (start > h->ring_next) {
		h->guest_overwritten += start - h->ring_next;
		h->guest_lost += start - h->ring_next;
		trace_writer_drops(h->rec->out, h->guest_overwritten, 0,
				   "overwritten in the guest ring");
	}
	for (uint64_t i = start; i < head; i++) {
		struct et_ring_record ev = ring->records[i % ring->capacity];

		/* A record is complete only once its writer stored its index in
		 * cpu, last (abi.h): the vCPU may have stopped in the middle of
		 * one, or a later lap be rewriting its slot. */
		if (ev.cpu != (uint32_t)i) {
			if (!final) {
				head = i; /* read it next time */
				break;
			}
			incomplete++;
			continue;
		}
		/* A guest records calls on one CPU, nothing else, whatever it
		 * wrote. */
		ev.cpu = h->rec->vcpu ? h->rec->vcpu->id : 0;
		ev.kind = ET_REC_CALL;
		ev.flags = ET_REC_SRC_GUEST;
		if (h->fr)
			flight_recorder_add_guest(h->fr, &ev);
		trace_writer_events(h->rec->out, &ev, 1);
		h->guest_events++;
	}
	h->ring_next = head;
	if (incomplete) {
		h->guest_incomplete += incomplete;
		h->guest_lost += incomplete;
		trace_writer_drops(h->rec->out, h->guest_incomplete, 0,
				   "incomplete in the guest ring (being written when the run ended)");
	}
}
