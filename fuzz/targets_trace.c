/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets of trace files (see targets.h): the reader with every
 * report format (trace_reader), and expectation files evaluated over a
 * small trace (expect).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

#include "earlytrace/abi.h"
#include "fuzz/targets.h"
#include "fuzz/targets_helpers.h"
#include "vmm/check/expect.h"
#include "vmm/report/report.h"
#include "vmm/symbols/symbols.h"
#include "vmm/tracefile/trace_file.h"

/* ---- trace files ------------------------------------------------------ */

/* Opens and reads the file; with report, also writes one report format
 * (picked by the size: each is slow to set up, so one per input). */
static int read_trace(const uint8_t *data, size_t size, bool report)
{
	static const enum report_format formats[] = { REPORT_FTRACE, REPORT_JSON, REPORT_CSV,
						       REPORT_SUMMARY, REPORT_TRACE_DAT };
	static FILE *null;
	struct trace_reader *r;
	struct trace_record rec;
	const char *path = fuzz_as_file(data, size);
	char state[256];
	size_t nr_notes;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!path || !null || trace_reader_open(&r, path))
		return -1;
	trace_reader_state(r, state, sizeof(state));
	trace_reader_notes(r, &nr_notes);
	fuzz_use_symtab(trace_reader_symtab(r));
	while (trace_reader_next(r, &rec) > 0)
		;
	if (report) {
		trace_reader_rewind(r);
		report_write(r, formats[size % (sizeof(formats) / sizeof(formats[0]))], null);
	}
	trace_reader_close(r);
	return 0;
}

uint8_t *fuzz_trace_fix_crcs(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	size_t off;
	uint32_t hlen;

	hlen = size >= TRACE_FILE_HEADER_SIZE ? get_le32(data + 12) : 0;
	if (hlen < TRACE_FILE_HEADER_SIZE || hlen > size || !(copy = malloc(size)))
		return NULL;
	memcpy(copy, data, size);
	for (off = hlen; size - off >= TRACE_RECORD_OVERHEAD;) {
		uint32_t len = get_le32(copy + off + 4);

		if (len > size - off - TRACE_RECORD_OVERHEAD)
			break;
		put_le32(copy + off + 8 + len, (uint32_t)crc32(0L, copy + off, 8 + len));
		off += TRACE_RECORD_OVERHEAD + len;
	}
	return copy;
}

int fuzz_trace_reader(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	int ret;

	/* As is, then with every complete record's CRC made right: a fuzzer
	 * does not find CRC32s, so without this it would never get past them. */
	copy = fuzz_trace_fix_crcs(data, size);
	if (!copy)
		return read_trace(data, size, true);
	if (memcmp(copy, data, size)) {
		read_trace(data, size, false);
		ret = read_trace(copy, size, true);
	} else {
		ret = read_trace(data, size, true);
	}
	free(copy);
	return ret;
}

/* ---- expectations ----------------------------------------------------- */

/* A small trace to evaluate expectations on, made once: the test
 * kernels' ct_* functions, a handoff mark, drops, and a TSC frequency. */
static const char *expect_trace(void)
{
	static const char *const names[] = { "ct_root", "ct_branch", "ct_leaf", "ct_fib",
					     "start_kernel", "__warn" };
	static char path[64];
	static bool made;
	struct symbol syms[sizeof(names) / sizeof(names[0])];
	struct symtab tab = { syms, sizeof(names) / sizeof(names[0]) };
	struct trace_meta meta = { .kernel_path = "fuzz.elf", .tsc_khz = 1000000,
				   .mode = "breakpoint" };
	struct trace_writer *w;
	int fd;

	if (made)
		return path;
	fd = memfd_create("earlytrace-fuzz-trace", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (size_t i = 0; i < tab.nr; i++)
		syms[i] = (struct symbol){ .addr = 0xffffffff81000000ull + 0x100 * i, .size = 0x40,
					   .name = names[i], .type = 'T' };
	if (trace_writer_open(&w, path, &meta) || trace_writer_symbols(w, &tab))
		return NULL;
	for (unsigned i = 0; i < 64; i++) {
		struct et_ring_record ev = {
			.tsc = 1000 * (i + 1),
			.ip = syms[i < 2 ? i : 2 + i % 2].addr,
			.parent_ip = syms[0].addr + 5,
			.kind = ET_REC_CALL,
			.flags = ET_REC_SRC_BREAKPOINT,
		};

		trace_writer_events(w, &ev, 1);
		if (i == 32)
			trace_writer_mark(w, ev.tsc, "handoff: ftrace_init reached, 4 sites restored");
	}
	trace_writer_drops(w, 2, 70000, "host buffer full (--overflow stop)");
	if (trace_writer_close(w, 66, 2, "debug-exit port"))
		return NULL;
	made = true;
	return path;
}

static void expect_warn(void *ctx, const struct expect_list *l, const struct expect *e,
			const char *func, const char *why)
{
	(void)ctx, (void)l, (void)e, (void)func, (void)why;
}

int fuzz_expect(const uint8_t *data, size_t size)
{
	static const char *const filters[] = { "ct_*", "start_kernel" }, *const notrace[] = { "ct_fib" };
	struct expect_list l;
	struct expect_outcome *out;
	struct trace_reader *r;
	const char *path = fuzz_as_file(data, size), *trace = expect_trace();

	if (!path || expect_parse_file(&l, path))
		return -1;
	expect_check_filters(&l, filters, 2, notrace, 1, expect_warn, NULL);
	out = calloc(l.nr, sizeof(*out));
	if (out && trace && trace_reader_open(&r, trace) == 0) {
		struct expect_facts facts;

		expect_evaluate(&l, r, out, &facts);
		trace_reader_close(r);
	}
	free(out);
	expect_list_free(&l);
	return 0;
}
