/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets' "feed bytes" logic, shared by the libFuzzer binaries
 * (fuzz/fuzz_<name>.c, built with clang by fuzz/run.sh) and by the gcc
 * regression test (tests/unit/test_fuzz_regressions.cc), so a crash file
 * replays through exactly the code the fuzzer ran.
 *
 * Each function takes arbitrary bytes and drives one untrusted-input entry
 * point of the VMM with them. None of them may crash, leak or trip a
 * sanitizer whatever the bytes; errors are the library's ordinary one-line
 * errors (et_error) and are ignored here. They return 0 when the input was
 * accepted by the code under test, -1 when it was refused (a hint for
 * tests and corpus checks, not a verdict).
 */
#ifndef FUZZ_TARGETS_H
#define FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* kernel_image_parse() on the bytes as an ELF kernel, then what commands do
 * with a parsed kernel: build-id, symbols (.symtab, else kallsyms), sites,
 * trampoline region, loading and boot structures into a small guest RAM. */
int fuzz_elf(const uint8_t *data, size_t size);

/* A bzImage (boot flag and "HdrS"): kernel_image_open() on it, as the run
 * does (setup header, payload, decompression, the ELF inside, then as
 * fuzz_elf). Any other bytes: u32 announced size, then a payload for
 * decompress() directly. */
int fuzz_bzimage(const uint8_t *data, size_t size);

/* symbols_from_system_map() on the bytes as a System.map file. */
int fuzz_system_map(const uint8_t *data, size_t size);

/* kallsyms_decode() on the bytes as an image, for 8- and 4-byte pointers. */
int fuzz_kallsyms(const uint8_t *data, size_t size);

/* trace_reader_open() on the bytes as a trace file, every record read,
 * every report format written to /dev/null; then the same with each
 * record's CRC made right, so the decoders behind the CRC are reached. */
int fuzz_trace_reader(const uint8_t *data, size_t size);

/* The hypercall port (vmm/trace/handoff.c) driven by a script of guest
 * actions: memory writes, hypercall blocks, ring headers, port accesses,
 * events recorded before the handoff; then the guest ring collected. */
int fuzz_hypercall(const uint8_t *data, size_t size);

/* Trampoline mode's batch drain (vmm/trace/tramp_mode.c, trampolines/batch.c)
 * with trampolines installed in guest RAM and a script of guest writes to
 * the batch header and records, drains, and the final stop. */
int fuzz_tramp_drain(const uint8_t *data, size_t size);

/* arch_translate() and arch_read_virt() over page tables that are the input
 * bytes tiled over guest RAM (loops, out-of-RAM pointers, every mode). */
int fuzz_page_walk(const uint8_t *data, size_t size);

/* expect_parse_file() on the bytes as an expectation file (vmm/check/),
 * then expect_check_filters() and expect_evaluate() over a small trace. */
int fuzz_expect(const uint8_t *data, size_t size);

/* The kernel ring-buffer reader (fuzz/targets_ftrace.c): one ring-buffer
 * page decoded, its events' payloads decoded and rendered (formats and
 * strings from guest memory after the page), and a bprint format with its
 * arguments rendered directly. */
int fuzz_ftrace_page(const uint8_t *data, size_t size);

/* The same reader over whole rings: the input is guest memory holding
 * global_trace and everything it points to, read three times. */
int fuzz_ftrace_ring(const uint8_t *data, size_t size);

/* The fill over such rings: every write inside the ring's own structures,
 * and what was written reads back. */
int fuzz_ftrace_fill(const uint8_t *data, size_t size);

/* The layout all three use: Linux 6.1 x86-64, as the committed BTF fixture has it. */
struct ftrace_layout;
void fuzz_ftrace_layout(struct ftrace_layout *L);
/* panic_message_format() on a guest panic's format string and argument
 * words (mode byte: count, 4- or 8-byte words), %s reading a small guest
 * RAM made of the rest of the bytes. */
int fuzz_panic_message(const uint8_t *data, size_t size);

/* printk_format() itself (fuzz/targets_printk.c): any format in any style,
 * with arguments, strings, pointers and symbol names from the bytes. */
int fuzz_printk_format(const uint8_t *data, size_t size);

/* libvirt_domain_parse() on the bytes as a domain definition
 * (fuzz/targets_libvirt.c): its error or notes must be one line each. */
int fuzz_domain_xml(const uint8_t *data, size_t size);

/* The trace.dat writer read back (fuzz/targets_tracedat.c): the bytes as
 * an earlytrace trace file (CRCs made right, as for trace_reader), written
 * as trace.dat (`report --format trace-dat`), then opened with libtracecmd
 * and every record read; aborts when the file cannot be read or holds
 * other events than the trace says it must (count per CPU, unknown event
 * types, the CPU count, time going backwards on a CPU). */
int fuzz_tracedat_readback(const uint8_t *data, size_t size);

/* Helpers the targets share. The bytes as a file (a memfd named through
 * /proc/self/fd): its path, valid until the next call; NULL on failure. */
const char *fuzz_as_file(const uint8_t *data, size_t size);
/* A malloc'ed copy of a trace file's bytes with every complete record's
 * CRC made right; NULL when the bytes have no trace file header. */
uint8_t *fuzz_trace_fix_crcs(const uint8_t *data, size_t size);

struct fuzz_target {
	const char *name; /* the fuzz/fuzz_<name>.c and tests/fuzz-corpus/<name>/ name */
	int (*run)(const uint8_t *data, size_t size);
};

/* Every target, ending with { NULL, NULL }. */
extern const struct fuzz_target fuzz_targets[];

/* The target called name, or NULL. */
const struct fuzz_target *fuzz_target_find(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* FUZZ_TARGETS_H */
