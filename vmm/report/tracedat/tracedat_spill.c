/* SPDX-License-Identifier: MIT */
/* Pages waiting in a temporary file (tracedat_spill.h). */
#include "vmm/report/tracedat/tracedat_spill.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/report/tracedat/tracedat_formats.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"

struct spill_run {
	uint64_t offset; /* in the temporary file */
	uint32_t nr_pages;
};

#define COPY_PAGES 16

int tracedat_spill_init(struct tracedat_spill *s, uint32_t nr_cpus)
{
	memset(s, 0, sizeof(*s));
	s->cpus = calloc(nr_cpus ? nr_cpus : 1, sizeof(*s->cpus));
	if (!s->cpus)
		return et_error("out of memory");
	s->nr_cpus = nr_cpus;
	return 0;
}

void tracedat_spill_free(struct tracedat_spill *s)
{
	if (s->tmp)
		fclose(s->tmp);
	if (s->cpus)
		for (uint32_t i = 0; i < s->nr_cpus; i++)
			free(s->cpus[i].runs);
	free(s->cpus);
	memset(s, 0, sizeof(*s));
}

int tracedat_spill_put(struct tracedat_spill *s, uint32_t cpu, const uint8_t *pages,
		       uint32_t nr_pages)
{
	struct spill_cpu *c = &s->cpus[cpu];
	size_t len = (size_t)nr_pages * TRACEDAT_PAGE_SIZE;

	if (!s->tmp && !(s->tmp = tmpfile()))
		return et_error_errno("trace-dat: cannot create a temporary file");
	if (pwrite(fileno(s->tmp), pages, len, (off_t)s->end) != (ssize_t)len)
		return et_error_errno("trace-dat: cannot write the temporary file");
	if (c->nr && c->runs[c->nr - 1].offset + c->runs[c->nr - 1].nr_pages * TRACEDAT_PAGE_SIZE ==
			     s->end &&
	    c->runs[c->nr - 1].nr_pages <= UINT32_MAX - nr_pages) {
		/* Follows on from this CPU's last run. */
		c->runs[c->nr - 1].nr_pages += nr_pages;
	} else {
		if (c->nr == c->cap) {
			struct spill_run *r = array_grow(c->runs, &c->cap, sizeof(*r), 16);

			if (!r)
				return et_error("out of memory");
			c->runs = r;
		}
		c->runs[c->nr++] = (struct spill_run){ s->end, nr_pages };
	}
	s->end += len;
	return 0;
}

int tracedat_spill_copy(struct tracedat_spill *s, uint32_t cpu, struct tracedat_out *o,
			uint64_t offset)
{
	const struct spill_cpu *c = &s->cpus[cpu];
	uint8_t *buf;
	int ret = 0;

	if (!c->nr)
		return 0;
	if (!(buf = malloc(COPY_PAGES * TRACEDAT_PAGE_SIZE)))
		return et_error("out of memory");
	for (size_t i = 0; i < c->nr && !ret; i++) {
		uint64_t from = c->runs[i].offset;

		for (uint32_t left = c->runs[i].nr_pages; left && !ret;) {
			uint32_t n = left < COPY_PAGES ? left : COPY_PAGES;
			size_t len = (size_t)n * TRACEDAT_PAGE_SIZE;

			if (pread(fileno(s->tmp), buf, len, (off_t)from) != (ssize_t)len)
				ret = et_error_errno("trace-dat: cannot read the temporary file");
			else
				ret = tracedat_out_write_at(o, offset, buf, len);
			from += len;
			offset += len;
			left -= n;
		}
	}
	free(buf);
	return ret;
}
