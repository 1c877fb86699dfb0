/* SPDX-License-Identifier: MIT */
/* Event records in the layouts of tracedat_formats.c (tracedat_events.h). */
#include "vmm/report/tracedat/tracedat_events.h"

#include <stdint.h>
#include <string.h>

#include "vmm/report/tracedat/tracedat_out.h"
#include "vmm/report/tracedat/tracedat_pages.h"

void tracedat_common(uint8_t *buf, uint16_t type, uint8_t flags, int32_t pid)
{
	tracedat_put_u16(buf, type);
	buf[2] = flags;
	buf[3] = 0; /* preempt count */
	tracedat_put_u32(buf + 4, (uint32_t)pid);
}

uint32_t tracedat_ev_function(uint8_t *buf, uint8_t flags, uint64_t ip, uint64_t parent_ip)
{
	tracedat_common(buf, TRACEDAT_ID_FUNCTION, flags, 0);
	tracedat_put_u64(buf + TRACEDAT_OFF_FUNCTION_IP, ip);
	tracedat_put_u64(buf + TRACEDAT_OFF_FUNCTION_PARENT, parent_ip);
	return TRACEDAT_SIZE_FUNCTION;
}

uint32_t tracedat_ev_graph_entry(uint8_t *buf, uint8_t flags, uint64_t func, int32_t depth)
{
	tracedat_common(buf, TRACEDAT_ID_FUNCGRAPH_ENTRY, flags, 0);
	tracedat_put_u64(buf + TRACEDAT_OFF_GRAPH_ENT_FUNC, func);
	tracedat_put_u32(buf + TRACEDAT_OFF_GRAPH_ENT_DEPTH, (uint32_t)depth);
	return TRACEDAT_SIZE_GRAPH_ENT;
}

uint32_t tracedat_ev_graph_exit(uint8_t *buf, uint8_t flags, uint64_t func, int32_t depth,
				uint64_t calltime, uint64_t rettime)
{
	tracedat_common(buf, TRACEDAT_ID_FUNCGRAPH_EXIT, flags, 0);
	tracedat_put_u64(buf + TRACEDAT_OFF_GRAPH_RET_FUNC, func);
	tracedat_put_u32(buf + TRACEDAT_OFF_GRAPH_RET_DEPTH, (uint32_t)depth);
	tracedat_put_u32(buf + TRACEDAT_OFF_GRAPH_RET_OVERRUN, 0);
	tracedat_put_u64(buf + TRACEDAT_OFF_GRAPH_RET_CALLTIME, calltime);
	tracedat_put_u64(buf + TRACEDAT_OFF_GRAPH_RET_RETTIME, rettime);
	return TRACEDAT_SIZE_GRAPH_RET;
}

/* Appends s for the __data_loc field at loc (u32: length with the NUL
 * << 16 | offset), cut to max bytes and to what the record has room for. */
static void put_string(uint8_t *buf, uint32_t *len, uint32_t loc, const char *s, size_t max,
		       uint64_t *cut)
{
	size_t room = TRACEDAT_MAX_PAYLOAD - *len - 1, n = strlen(s);

	if (max > room)
		max = room;
	if (n > max) {
		n = max;
		(*cut)++;
	}
	memcpy(buf + *len, s, n);
	buf[*len + n] = '\0';
	tracedat_put_u32(buf + loc, (uint32_t)(n + 1) << 16 | *len);
	*len += (uint32_t)n + 1;
}

uint32_t tracedat_ev_vm_exit(uint8_t *buf, uint8_t flags, const struct et_exit *x, uint64_t rip,
			     const char *desc, uint64_t *cut)
{
	uint32_t len = TRACEDAT_SIZE_EXIT;

	tracedat_common(buf, TRACEDAT_ID_VM_EXIT, flags, 0);
	tracedat_put_u64(buf + TRACEDAT_OFF_EXIT_RIP, rip);
	tracedat_put_u64(buf + TRACEDAT_OFF_EXIT_ADDR, x->addr);
	tracedat_put_u64(buf + TRACEDAT_OFF_EXIT_VALUE, x->value);
	buf[TRACEDAT_OFF_EXIT_KIND] = (uint8_t)x->kind;
	buf[TRACEDAT_OFF_EXIT_SIZE] = x->size;
	buf[TRACEDAT_OFF_EXIT_WRITE] = x->write;
	buf[TRACEDAT_OFF_EXIT_UNCLAIMED] = x->unclaimed;
	put_string(buf, &len, TRACEDAT_OFF_EXIT_DESC, desc, SIZE_MAX, cut);
	return len;
}

uint32_t tracedat_ev_mark(uint8_t *buf, uint8_t flags, const char *text, uint64_t *cut)
{
	uint32_t len = TRACEDAT_SIZE_MARK;

	tracedat_common(buf, TRACEDAT_ID_MARK, flags, 0);
	put_string(buf, &len, TRACEDAT_OFF_MARK_TEXT, text, SIZE_MAX, cut);
	return len;
}

uint32_t tracedat_ev_print(uint8_t *buf, uint8_t flags, uint64_t ip, const char *text,
			   uint64_t *cut)
{
	size_t n = strlen(text), room = TRACEDAT_MAX_PAYLOAD - TRACEDAT_OFF_PRINT_BUF - 1;

	tracedat_common(buf, TRACEDAT_ID_PRINT, flags, 0);
	tracedat_put_u64(buf + TRACEDAT_OFF_PRINT_IP, ip);
	if (n > room) {
		n = room;
		(*cut)++;
	}
	/* char buf[]: the text in place, NUL-terminated. */
	memcpy(buf + TRACEDAT_OFF_PRINT_BUF, text, n);
	buf[TRACEDAT_OFF_PRINT_BUF + n] = '\0';
	return (uint32_t)(TRACEDAT_OFF_PRINT_BUF + n + 1);
}

uint32_t tracedat_ev_drops(uint8_t *buf, uint8_t flags, uint64_t count, uint64_t total,
			   const char *reason, uint64_t *cut)
{
	uint32_t len = TRACEDAT_SIZE_DROPS;

	tracedat_common(buf, TRACEDAT_ID_DROPS, flags, 0);
	tracedat_put_u64(buf + TRACEDAT_OFF_DROPS_COUNT, count);
	tracedat_put_u64(buf + TRACEDAT_OFF_DROPS_TOTAL, total);
	put_string(buf, &len, TRACEDAT_OFF_DROPS_REASON, reason, SIZE_MAX, cut);
	return len;
}

uint32_t tracedat_ev_end(uint8_t *buf, uint8_t flags, const struct tracedat_end_info *e,
			 uint64_t *cut)
{
	uint32_t len = TRACEDAT_SIZE_END;

	tracedat_common(buf, TRACEDAT_ID_END, flags, 0);
	tracedat_put_u64(buf + TRACEDAT_OFF_END_RECORDED, e->recorded);
	tracedat_put_u64(buf + TRACEDAT_OFF_END_WRITTEN, e->written);
	tracedat_put_u64(buf + TRACEDAT_OFF_END_DROPPED, e->dropped);
	tracedat_put_u64(buf + TRACEDAT_OFF_END_LOST, e->lost);
	tracedat_put_u32(buf + TRACEDAT_OFF_END_FINISHED, e->finished);
	put_string(buf, &len, TRACEDAT_OFF_END_REASON, e->reason, SIZE_MAX, cut);
	return len;
}

uint32_t tracedat_ev_run(uint8_t *buf, uint8_t flags, const struct tracedat_run_info *run,
			 uint64_t *cut)
{
	uint32_t len = TRACEDAT_SIZE_RUN;

	tracedat_common(buf, TRACEDAT_ID_RUN, flags, 0);
	tracedat_put_u64(buf + TRACEDAT_OFF_RUN_TSC_KHZ, run->tsc_khz);
	tracedat_put_u64(buf + TRACEDAT_OFF_RUN_START_TIME, run->start_time_ns);
	/* Five strings in one page: each gets its share. */
	put_string(buf, &len, TRACEDAT_OFF_RUN_VERSION, run->version, TRACEDAT_RUN_STRING_MAX, cut);
	put_string(buf, &len, TRACEDAT_OFF_RUN_KERNEL, run->kernel, TRACEDAT_RUN_STRING_MAX, cut);
	put_string(buf, &len, TRACEDAT_OFF_RUN_BUILD_ID, run->build_id, TRACEDAT_RUN_STRING_MAX, cut);
	put_string(buf, &len, TRACEDAT_OFF_RUN_MODE, run->mode, TRACEDAT_RUN_STRING_MAX, cut);
	put_string(buf, &len, TRACEDAT_OFF_RUN_SYMBOLS, run->symbols, TRACEDAT_RUN_STRING_MAX, cut);
	return len;
}
