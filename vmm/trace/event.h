/* SPDX-License-Identifier: MIT */
/*
 * One traced event as the host keeps it is a struct et_ring_record (from
 * the guest ABI): the same fields and layout as a record in the guest's
 * ring, so events move between host buffers, the guest ring and trace
 * files without conversion. Every event carries the guest TSC, so int3
 * hits, trampoline records and guest-ring records interleave on one clock.
 */
#ifndef VMM_TRACE_EVENT_H
#define VMM_TRACE_EVENT_H

#include "earlytrace/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline unsigned trace_event_source(const struct et_ring_record *ev)
{
	return ev->flags & ET_REC_SRC_MASK;
}

/* Who recorded a call or return: "breakpoint", "trampoline", "guest"
 * (guestlib's ring), "ftrace" (a stock kernel's own ring), "unknown". */
static inline const char *trace_event_source_name(const struct et_ring_record *ev)
{
	switch (trace_event_source(ev)) {
	case ET_REC_SRC_BREAKPOINT:
		return "breakpoint";
	case ET_REC_SRC_TRAMPOLINE:
		return "trampoline";
	case ET_REC_SRC_GUEST:
		return ev->flags & ET_REC_F_FTRACE ? "ftrace" : "guest";
	}
	return "unknown";
}

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_EVENT_H */
