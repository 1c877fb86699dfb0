/* SPDX-License-Identifier: MIT */
/*
 * The trace.dat writer read back (fuzz_tracedat_readback, targets.h): what
 * `report --format trace-dat` writes for any trace file the reader takes
 * must open in libtracecmd (tests/tracedat_read.c, trace-cmd's own reader)
 * and hold exactly the events the writer's mapping promises
 * (vmm/report/tracedat/tracedat_report.c):
 *
 *   CPU 0: earlytrace:run, the marks and drops, the kernel's raw events,
 *          a last earlytrace:mark when something could not be expressed,
 *          earlytrace:end;
 *   each event's own vCPU (those below TRACEDAT_MAX_CPUS): its calls,
 *          returns and VM exits, and the kernel's trace_printk texts.
 *
 * Anything else aborts: a file libtracecmd cannot open or iterate (an
 * unreadable page), another count on any CPU, a record of no known event
 * type, another CPU count, or time going backwards on a CPU (where no time
 * is past the 2^64 ns at which libtracecmd's conversion wraps: the writer
 * counts those in its "could not express" note).
 */
#include "fuzz/targets.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/tracedat_read.h"
#include "vmm/report/report.h"
#include "vmm/report/tracedat/tracedat_clock.h"
#include "vmm/report/tracedat/tracedat_pages.h"
#include "vmm/trace/event.h"
#include "vmm/tracefile/trace_file.h"

struct readback {
	uint32_t nr_cpus;
	uint64_t *want;	       /* events per CPU, from the trace's own reading */
	uint64_t *got;	       /* per CPU, as libtracecmd read them */
	unsigned long long *last_ts; /* per CPU */
	bool ordered;	       /* times can be compared: no conversion wraps */
	bool bad;
	char why[160];
};

static void fail(struct readback *rb, const char *why, int cpu)
{
	if (!rb->bad)
		snprintf(rb->why, sizeof(rb->why), "%s (cpu %d)", why, cpu);
	rb->bad = true;
}

static void got_record(void *ctx, const struct dat_record *rec)
{
	struct readback *rb = ctx;

	if (rec->cpu < 0 || (uint32_t)rec->cpu >= rb->nr_cpus) {
		fail(rb, "a record on a CPU the file does not have", rec->cpu);
		return;
	}
	if (!rec->name)
		fail(rb, "a record of no known event type", rec->cpu);
	else if (strcmp(rec->system, "ftrace") && strcmp(rec->system, "earlytrace"))
		fail(rb, "a record of another event system", rec->cpu);
	if (rb->ordered && rb->got[rec->cpu] && rec->ts < rb->last_ts[rec->cpu])
		fail(rb, "time goes backwards", rec->cpu);
	rb->last_ts[rec->cpu] = rec->ts;
	rb->got[rec->cpu]++;
}

/* What trace.dat must hold per CPU, counted from the trace as the writer
 * maps it (without the losses mark, known only after writing). */
static int expected(struct trace_reader *r, struct readback *rb)
{
	size_t nr_notes;
	const struct trace_note *notes = trace_reader_notes(r, &nr_notes);
	struct trace_merge *m;
	struct et_ring_record e;
	int ret;

	struct tracedat_clock clock;

	/* Times past 2^64 ns wrap in libtracecmd's conversion (the writer
	 * counts and says so): then order cannot be judged from its times. */
	tracedat_clock_init(&clock, trace_reader_info(r)->tsc_khz);
	if (trace_reader_info(r)->has_origin) /* as the writer does */
		tracedat_clock_anchor(&clock, trace_reader_info(r)->origin_tsc);
	rb->ordered = true;
	rb->want[0] += 2; /* earlytrace:run and earlytrace:end */
	for (size_t i = 0; i < nr_notes; i++) {
		const struct trace_note *n = &notes[i];
		bool printk = n->type == TRACE_REC_KEVENT && n->kevent_kind != TRACE_KEVENT_RAW &&
			      n->cpu < rb->nr_cpus;

		rb->want[printk ? n->cpu : 0]++;
		if (tracedat_clock_wraps(&clock, n->tsc))
			rb->ordered = false;
	}
	if (trace_merge_open(r, &m))
		return -1;
	while ((ret = trace_merge_next(m, &e)) > 0) {
		if (et_rec_cpu(&e) < rb->nr_cpus)
			rb->want[et_rec_cpu(&e)]++;
		if (tracedat_clock_wraps(&clock, e.tsc))
			rb->ordered = false;
	}
	trace_merge_close(m);
	return ret;
}

/* libtracecmd 3.1.6 leaves pages of the file it read mapped after
 * tracecmd_close() (a few mappings a file): over tens of thousands of
 * executions the process reaches vm.max_map_count and every mmap fails,
 * AddressSanitizer's own included. The handle is closed, so nothing can
 * use them any more: unmap whatever of the output file is still mapped. */
static void unmap_leftovers(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];

	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long start, end;

		if (strstr(line, "/memfd:earlytrace-fuzz-dat") &&
		    sscanf(line, "%lx-%lx", &start, &end) == 2)
			munmap((void *)start, end - start);
	}
	fclose(maps);
}

/* The trace.dat output: its own memfd, rewritten for each input. */
static FILE *output(char *path, size_t len)
{
	static int fd = -1;
	int dup_fd;
	FILE *f;

	if (fd < 0) {
		fd = memfd_create("earlytrace-fuzz-dat", MFD_CLOEXEC);
		if (fd < 0)
			return NULL;
	}
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		return NULL;
	snprintf(path, len, "/proc/self/fd/%d", fd);
	dup_fd = dup(fd);
	if (dup_fd < 0)
		return NULL;
	f = fdopen(dup_fd, "w");
	if (!f)
		close(dup_fd);
	return f;
}

static int readback(const uint8_t *data, size_t size)
{
	struct trace_reader *r;
	const char *path = fuzz_as_file(data, size);
	struct readback rb = { 0 };
	char dat[64];
	int cpus = 0, ret = -1;
	FILE *f;

	if (!path || trace_reader_open(&r, path))
		return -1;
	rb.nr_cpus = trace_reader_info(r)->nr_cpus ? trace_reader_info(r)->nr_cpus : 1;
	if (rb.nr_cpus > TRACEDAT_MAX_CPUS)
		rb.nr_cpus = TRACEDAT_MAX_CPUS;
	rb.want = calloc(rb.nr_cpus, sizeof(*rb.want));
	rb.got = calloc(rb.nr_cpus, sizeof(*rb.got));
	rb.last_ts = calloc(rb.nr_cpus, sizeof(*rb.last_ts));
	if (!rb.want || !rb.got || !rb.last_ts || expected(r, &rb) < 0)
		goto out;
	f = output(dat, sizeof(dat));
	if (!f)
		goto out;
	trace_reader_rewind(r);
	/* A trace the reader took but the writer refuses (say, a record
	 * found corrupt on a later pass) is an ordinary error. */
	if (report_write(r, REPORT_TRACE_DAT, f)) {
		fclose(f);
		goto out;
	}
	if (fclose(f))
		abort(); /* the file was written, the last buffer was not */
	if (report_note()[0])
		rb.want[0]++; /* "trace-dat could not express: ..." */

	ret = dat_read(dat, &cpus, got_record, &rb);
	unmap_leftovers();
	if (ret) {
		fprintf(stderr, "tracedat_readback: libtracecmd cannot read the file\n");
		abort();
	}
	if ((uint32_t)cpus != rb.nr_cpus) {
		fprintf(stderr, "tracedat_readback: %d CPUs, the trace has %u\n", cpus, rb.nr_cpus);
		abort();
	}
	for (uint32_t cpu = 0; cpu < rb.nr_cpus; cpu++)
		if (rb.got[cpu] != rb.want[cpu]) {
			fprintf(stderr, "tracedat_readback: cpu %u: %llu events read, %llu written\n",
				cpu, (unsigned long long)rb.got[cpu],
				(unsigned long long)rb.want[cpu]);
			abort();
		}
	if (rb.bad) {
		fprintf(stderr, "tracedat_readback: %s\n", rb.why);
		abort();
	}
	ret = 0;
out:
	free(rb.want);
	free(rb.got);
	free(rb.last_ts);
	trace_reader_close(r);
	return ret;
}

int fuzz_tracedat_readback(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_trace_fix_crcs(data, size);
	int ret;

	/* With the CRCs made right only: the writer sees nothing of a file
	 * the reader refuses, and trace_reader already fuzzes refusals. */
	if (!copy)
		return readback(data, size);
	ret = readback(copy, size);
	free(copy);
	return ret;
}
