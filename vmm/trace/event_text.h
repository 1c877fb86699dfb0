/* SPDX-License-Identifier: MIT */
/*
 * Events in words, for every place that shows one: the reports, the flight
 * recorder, check's messages.
 */
#ifndef VMM_TRACE_EVENT_TEXT_H
#define VMM_TRACE_EVENT_TEXT_H

#include <stddef.h>

#include "earlytrace/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An exit event in words, e.g. "pio write port 0x3f8 size 1 value 0x41",
 * "msr read 0xc0000080 (efer) value 0xd01", "shutdown (triple fault)". */
const char *event_exit_text(const struct et_ring_record *e, char *buf, size_t len);
/* The short name of an exit's kind: "pio", "mmio", "msr", ... */
const char *event_exit_kind_name(unsigned kind);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_EVENT_TEXT_H */
