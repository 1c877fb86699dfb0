/* SPDX-License-Identifier: MIT */
#include "vmm/trace/recorder.h"

#include <string.h>

int recorder_init(struct recorder *r, struct vcpu *vcpu, size_t capacity,
		  enum overflow_policy policy, uint64_t max_events)
{
	memset(r, 0, sizeof(*r));
	r->vcpu = vcpu;
	r->tsc_khz = vcpu_tsc_khz(vcpu);
	r->max_events = max_events;
	return host_buffer_init(&r->buf, capacity, policy);
}

void recorder_free(struct recorder *r)
{
	if (r->out)
		trace_writer_close(r->out, r->buf.recorded, r->buf.dropped, "aborted");
	host_buffer_free(&r->buf);
	memset(r, 0, sizeof(*r));
}

const char *recorder_drop_reason(const struct recorder *r)
{
	return r->buf.policy == OVERFLOW_STOP ? "host buffer full (--overflow stop)"
					      : "overwritten in the host buffer (--overflow overwrite)";
}

void recorder_record(struct recorder *r, const struct et_ring_record *ev)
{
	bool kept = host_buffer_add(&r->buf, ev);

	r->last_tsc = ev->tsc;
	if (et_rec_is_exit(ev))
		r->exits++;
	else if (et_rec_kind(ev) == ET_REC_RET)
		r->returns++;
	else
		r->calls++;

	if (r->tap)
		r->tap(r->tap_ctx, ev);
	/* Stop mode streams every kept event at once, so a crash or a kill
	 * loses nothing; a flight recorder writes its buffer at the end. */
	if (kept && r->buf.policy == OVERFLOW_STOP)
		trace_writer_events(r->out, ev, 1);
	/* Drops are logged as they happen (at 1, 2, 4, 8, ... so the file
	 * stays small), and the exact total again at the end: a file cut
	 * short by a kill still says events were dropped, and how many at
	 * least. */
	else if (!kept && (r->buf.dropped & (r->buf.dropped - 1)) == 0)
		trace_writer_drops(r->out, r->buf.dropped, ev->tsc, recorder_drop_reason(r));
	if (r->max_events && r->buf.recorded >= r->max_events)
		vm_request_stop(r->vcpu->vm, RUN_END_TRACE_DONE);
}

uint64_t recorder_now(const struct recorder *r)
{
	return vcpu_guest_tsc(r->vcpu);
}

void recorder_mark(struct recorder *r, uint64_t tsc, const char *text)
{
	trace_writer_mark(r->out, tsc, text);
}

void recorder_mark_now(struct recorder *r, const char *text)
{
	trace_writer_mark(r->out, recorder_now(r), text);
}

uint64_t recorder_room(const struct recorder *r)
{
	if (!r->max_events)
		return UINT64_MAX;
	return r->buf.recorded < r->max_events ? r->max_events - r->buf.recorded : 0;
}

void recorder_flush(struct recorder *r)
{
	const struct host_buffer *b = &r->buf;

	if (b->policy == OVERFLOW_OVERWRITE)
		for (size_t i = 0; i < b->count; i++)
			trace_writer_events(r->out, host_buffer_at(b, i), 1);
	if (b->dropped)
		trace_writer_drops(r->out, b->dropped,
				   b->count ? host_buffer_at(b, b->count - 1)->tsc : 0,
				   recorder_drop_reason(r));
}
