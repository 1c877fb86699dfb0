/* SPDX-License-Identifier: MIT */
/*
 * Where a trace.dat goes: a stdio stream, written in order or, when it is
 * a file, at given offsets (seeking only when not already there). Without
 * a stream it only counts bytes, which is how the writer learns the
 * header's length before writing it.
 */
#ifndef VMM_REPORT_TRACEDAT_TRACEDAT_OUT_H
#define VMM_REPORT_TRACEDAT_TRACEDAT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tracedat_out {
	FILE *f;      /* NULL: count only */
	uint64_t pos; /* the stream's position */
};

/* f's position is taken as offset 0 of the file. */
void tracedat_out_init(struct tracedat_out *o, FILE *f);
/* At the current position. 0, or -1 with an error. */
int tracedat_out_write(struct tracedat_out *o, const void *data, size_t len);
/* At offset: seeks only when the stream is elsewhere. */
int tracedat_out_write_at(struct tracedat_out *o, uint64_t offset, const void *data, size_t len);
/* Moves to offset (no-op when there already). */
int tracedat_out_seek(struct tracedat_out *o, uint64_t offset);
/* n zero bytes at the current position. */
int tracedat_out_zeros(struct tracedat_out *o, uint64_t n);
/* Little-endian integers and a NUL-terminated string, at the current position. */
int tracedat_out_u16(struct tracedat_out *o, uint16_t v);
int tracedat_out_u32(struct tracedat_out *o, uint32_t v);
int tracedat_out_u64(struct tracedat_out *o, uint64_t v);
int tracedat_out_cstr(struct tracedat_out *o, const char *s); /* with its NUL */

static inline void tracedat_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void tracedat_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void tracedat_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_TRACEDAT_TRACEDAT_OUT_H */
