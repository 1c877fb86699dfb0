/* SPDX-License-Identifier: MIT */
/* The trace.dat v6 file: sections in order, then the CPUs' pages
 * (tracedat_file.h). */
#include "vmm/report/tracedat/tracedat_file.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/report/tracedat/tracedat_spill.h"
#include "vmm/util/error.h"

/* trace-cmd's option ids (enum tracecmd_file_options). */
enum {
	OPTION_DONE = 0,
	OPTION_TRACECLOCK = 4,
	OPTION_OFFSET = 7,
	OPTION_TSC2NSEC = 14,
};

/* As the kernel's trace_clock file shows the clock in use. */
#define TRACE_CLOCK "[x86-tsc]"

static int write_magic(struct tracedat_out *o)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g',
					 '6', 0, 0 /* little-endian */, 8 /* long size */ };

	if (tracedat_out_write(o, magic, sizeof(magic)))
		return -1;
	return tracedat_out_u32(o, TRACEDAT_PAGE_SIZE);
}

/* A named text with a u64 size: header_page, header_event. */
static int write_header_text(struct tracedat_out *o, const char *name, const char *text)
{
	if (tracedat_out_cstr(o, name) || tracedat_out_u64(o, strlen(text)))
		return -1;
	return tracedat_out_write(o, text, strlen(text));
}

static int write_formats(struct tracedat_out *o, const struct tracedat_format *f, size_t n)
{
	if (tracedat_out_u32(o, (uint32_t)n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (tracedat_out_u64(o, strlen(f[i].text)) ||
		    tracedat_out_write(o, f[i].text, strlen(f[i].text)))
			return -1;
	return 0;
}

static int write_systems(struct tracedat_out *o, const struct tracedat_desc *d)
{
	if (tracedat_out_u32(o, (uint32_t)d->nr_systems))
		return -1;
	for (size_t i = 0; i < d->nr_systems; i++)
		if (tracedat_out_cstr(o, d->systems[i].name) ||
		    write_formats(o, d->systems[i].formats, d->systems[i].nr_formats))
			return -1;
	return 0;
}

/* kallsyms, whose size was counted before (counting outputs skip it). */
static int write_kallsyms(struct tracedat_out *o, const struct tracedat_desc *d, uint64_t size)
{
	static const struct symtab empty = { NULL, 0 };
	struct tracedat_kallsyms_stats stats;

	if (tracedat_out_u32(o, (uint32_t)size))
		return -1;
	if (!o->f) {
		o->pos += size;
		return 0;
	}
	if (tracedat_kallsyms(d->symbols ? d->symbols : &empty, o, &stats) != size)
		return et_error("trace-dat: kallsyms changed while written");
	return 0;
}

static int write_option(struct tracedat_out *o, uint16_t id, const void *data, uint32_t len)
{
	if (tracedat_out_u16(o, id) || tracedat_out_u32(o, len))
		return -1;
	return tracedat_out_write(o, data, len);
}

static int write_options(struct tracedat_out *o, const struct tracedat_clock *c)
{
	if (tracedat_out_write(o, "options  ", 10))
		return -1;
	if (c->mult) {
		uint8_t b[16];

		tracedat_put_u32(b, c->mult);
		tracedat_put_u32(b + 4, c->shift);
		tracedat_put_u64(b + 8, 0); /* read and ignored by libtracecmd */
		if (write_option(o, OPTION_TSC2NSEC, b, sizeof(b)))
			return -1;
	}
	if (c->offset_ns) {
		char text[32];
		int n = snprintf(text, sizeof(text), "%" PRId64, c->offset_ns);

		if (write_option(o, OPTION_OFFSET, text, (uint32_t)n + 1))
			return -1;
	}
	/* The option says a trace clock follows "flyrecord"; v6 readers take
	 * the clock from there. The name here has no brackets: libtracecmd
	 * 3.1.6 would parse a "[x86-tsc]" twice and leak the first copy
	 * (trace-cmd's own writer leaves the option empty). */
	if (write_option(o, OPTION_TRACECLOCK, "x86-tsc", sizeof("x86-tsc")))
		return -1;
	return tracedat_out_u16(o, OPTION_DONE);
}

/* Everything before the pages: the sections, "flyrecord" with each
 * CPU's offset and size (from data_start on, in CPU order), the clock.
 * Its length does not depend on the sizes. */
static int write_header(struct tracedat_out *o, const struct tracedat_desc *d,
			uint64_t kallsyms_size, const uint64_t *sizes, uint64_t data_start)
{
	const char *cmdlines = d->cmdlines ? d->cmdlines : "";
	uint64_t at = data_start;

	if (write_magic(o) || write_header_text(o, "header_page", tracedat_header_page) ||
	    write_header_text(o, "header_event", tracedat_header_event) ||
	    write_formats(o, tracedat_ftrace_formats, tracedat_nr_ftrace_formats) ||
	    write_systems(o, d) || write_kallsyms(o, d, kallsyms_size))
		return -1;
	if (tracedat_out_u32(o, 0)) /* printk formats: none */
		return -1;
	if (tracedat_out_u64(o, strlen(cmdlines)) ||
	    tracedat_out_write(o, cmdlines, strlen(cmdlines)))
		return -1;
	if (tracedat_out_u32(o, d->nr_cpus) || write_options(o, &d->clock))
		return -1;
	if (tracedat_out_write(o, "flyrecord", 10))
		return -1;
	for (uint32_t cpu = 0; cpu < d->nr_cpus; cpu++) {
		if (tracedat_out_u64(o, at) || tracedat_out_u64(o, sizes[cpu]))
			return -1;
		at += sizes[cpu];
	}
	if (tracedat_out_u64(o, strlen(TRACE_CLOCK)))
		return -1;
	return tracedat_out_write(o, TRACE_CLOCK, strlen(TRACE_CLOCK));
}

struct writer {
	struct tracedat_out out;
	bool direct;	     /* CPU 0's pages go straight into the output */
	uint64_t data_start; /* of CPU 0's pages */
	struct tracedat_spill spill;
};

/* Where finished pages go (tracedat_flush_fn). */
static int flush_pages(void *ctx, uint32_t cpu, uint64_t first_page, const uint8_t *pages,
		       uint32_t nr_pages)
{
	struct writer *w = ctx;

	if (cpu == 0 && w->direct)
		return tracedat_out_write_at(&w->out, w->data_start + first_page * TRACEDAT_PAGE_SIZE,
					     pages, (size_t)nr_pages * TRACEDAT_PAGE_SIZE);
	return tracedat_spill_put(&w->spill, cpu, pages, nr_pages);
}

/* A regular file (or memory stream) at its start, not in append mode:
 * pages can be put at their offsets. */
static bool seekable(FILE *f)
{
	int fd = fileno(f);

	if (fd >= 0 && (fcntl(fd, F_GETFL) & O_APPEND))
		return false;
	return ftello(f) == 0 && fseeko(f, 0, SEEK_SET) == 0;
}

/* The pages that waited, each CPU's after the CPU before it. */
static int place_waiting(struct writer *w, const struct tracedat_desc *d, const uint64_t *sizes)
{
	uint64_t at = w->data_start;

	for (uint32_t cpu = 0; cpu < d->nr_cpus; cpu++) {
		if (!(cpu == 0 && w->direct) && tracedat_spill_copy(&w->spill, cpu, &w->out, at))
			return -1;
		at += sizes[cpu];
	}
	return 0;
}

/* The header and the padding up to the first page, at the start. */
static int place_header(struct writer *w, const struct tracedat_desc *d, uint64_t kallsyms_size,
			const uint64_t *sizes)
{
	if (tracedat_out_seek(&w->out, 0) ||
	    write_header(&w->out, d, kallsyms_size, sizes, w->data_start))
		return -1;
	return tracedat_out_zeros(&w->out, w->data_start - w->out.pos);
}

int tracedat_write(FILE *f, const struct tracedat_desc *d, tracedat_emit_fn emit, void *ctx,
		   struct tracedat_result *res)
{
	static const struct symtab empty = { NULL, 0 };
	struct tracedat_pages p = { 0 };
	struct tracedat_out count;
	struct writer w;
	uint64_t *sizes = NULL, kallsyms_size, end;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	memset(&w, 0, sizeof(w));
	if (!d->nr_cpus || d->nr_cpus > TRACEDAT_MAX_CPUS)
		return et_error("trace-dat: %u CPUs (1 to %u can be written)", d->nr_cpus,
				TRACEDAT_MAX_CPUS);
	if (!(sizes = calloc(d->nr_cpus, sizeof(*sizes))))
		return et_error("out of memory");
	if (tracedat_spill_init(&w.spill, d->nr_cpus))
		goto out;
	kallsyms_size = tracedat_kallsyms(d->symbols ? d->symbols : &empty, NULL, &res->kallsyms);

	/* The header's length, counted; the pages start at the next page. */
	tracedat_out_init(&count, NULL);
	if (write_header(&count, d, kallsyms_size, sizes, 0))
		goto out;
	w.data_start = (count.pos + TRACEDAT_PAGE_SIZE - 1) / TRACEDAT_PAGE_SIZE * TRACEDAT_PAGE_SIZE;
	w.direct = seekable(f);
	tracedat_out_init(&w.out, f);

	if (tracedat_pages_init(&p, d->nr_cpus, flush_pages, &w) || emit(ctx, &p) ||
	    tracedat_pages_finish(&p))
		goto out;
	end = w.data_start;
	for (uint32_t cpu = 0; cpu < d->nr_cpus; cpu++) {
		sizes[cpu] = tracedat_pages_bytes(&p, cpu);
		res->events += tracedat_pages_events(&p, cpu);
		end += sizes[cpu];
	}
	res->backwards = p.backwards;
	res->bytes = end;

	/* A file gets its header last, a pipe first. */
	if (w.direct ? place_waiting(&w, d, sizes) || place_header(&w, d, kallsyms_size, sizes)
		     : place_header(&w, d, kallsyms_size, sizes) || place_waiting(&w, d, sizes))
		goto out;
	if (fflush(f) || ferror(f)) {
		et_error_errno("cannot write the trace.dat");
		goto out;
	}
	ret = 0;
out:
	tracedat_pages_free(&p);
	tracedat_spill_free(&w.spill);
	free(sizes);
	return ret;
}
