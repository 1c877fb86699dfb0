/* SPDX-License-Identifier: MIT */
/* The trace.dat output stream (tracedat_out.h). */
#include "vmm/report/tracedat/tracedat_out.h"

#include <string.h>

#include "vmm/util/error.h"

void tracedat_out_init(struct tracedat_out *o, FILE *f)
{
	o->f = f;
	o->pos = 0;
}

int tracedat_out_write(struct tracedat_out *o, const void *data, size_t len)
{
	if (o->f && len && fwrite(data, 1, len, o->f) != len)
		return et_error_errno("cannot write the trace.dat");
	o->pos += len;
	return 0;
}

int tracedat_out_seek(struct tracedat_out *o, uint64_t offset)
{
	if (offset == o->pos)
		return 0;
	if (o->f && (offset > INT64_MAX || fseeko(o->f, (off_t)offset, SEEK_SET)))
		return et_error_errno("trace-dat: cannot seek in the output");
	o->pos = offset;
	return 0;
}

int tracedat_out_write_at(struct tracedat_out *o, uint64_t offset, const void *data, size_t len)
{
	if (tracedat_out_seek(o, offset))
		return -1;
	return tracedat_out_write(o, data, len);
}

int tracedat_out_zeros(struct tracedat_out *o, uint64_t n)
{
	static const uint8_t zeros[4096];

	if (!o->f) {
		o->pos += n;
		return 0;
	}
	while (n) {
		size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);

		if (tracedat_out_write(o, zeros, k))
			return -1;
		n -= k;
	}
	return 0;
}

int tracedat_out_u16(struct tracedat_out *o, uint16_t v)
{
	uint8_t b[2];

	tracedat_put_u16(b, v);
	return tracedat_out_write(o, b, sizeof(b));
}

int tracedat_out_u32(struct tracedat_out *o, uint32_t v)
{
	uint8_t b[4];

	tracedat_put_u32(b, v);
	return tracedat_out_write(o, b, sizeof(b));
}

int tracedat_out_u64(struct tracedat_out *o, uint64_t v)
{
	uint8_t b[8];

	tracedat_put_u64(b, v);
	return tracedat_out_write(o, b, sizeof(b));
}

int tracedat_out_cstr(struct tracedat_out *o, const char *s)
{
	return tracedat_out_write(o, s, strlen(s) + 1);
}
