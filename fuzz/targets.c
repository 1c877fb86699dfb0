/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets' shared "feed bytes" logic (see targets.h): the table
 * of targets, the input as a file, and guest RAM. The targets themselves
 * are in targets_kernel.c, targets_trace.c, targets_guest.c,
 * targets_paging.c, targets_ftrace.c, targets_libvirt.c and
 * targets_tracedat.c. Compiled into the libFuzzer binaries (clang,
 * build/fuzz/) and into the gcc test binary, never into libearlytrace.a.
 *
 * Guest memory for the targets that drive guest-facing code is heap
 * memory, not mmap'ed, so AddressSanitizer has redzones right after each
 * region and an access the bounds checks let through is reported, not
 * silently read. It is allocated once per size and cleared (or entirely
 * overwritten) for every input, so no input sees another's bytes.
 */
#include "fuzz/targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz/targets_helpers.h"

/* ---- the input as a file ---------------------------------------------- */

/*
 * The bytes as a file, for entry points that take a path: one memfd per
 * process, rewritten for each input and named through /proc/self/fd, so
 * the code under test opens and reads it exactly as it would a disk file.
 */
const char *fuzz_as_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	size_t done = 0;

	if (fd < 0) {
		fd = memfd_create("earlytrace-fuzz", MFD_CLOEXEC);
		if (fd < 0)
			return NULL;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0))
		return NULL;
	while (done < size) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);

		if (n <= 0)
			return NULL;
		done += (size_t)n;
	}
	return path;
}

/* ---- guest RAM -------------------------------------------------------- */

/* One heap buffer per size, allocated once and reused by every input:
 * allocating megabytes per input would dominate the run time. Heap, not
 * mmap, so AddressSanitizer's redzones sit right after each region. */
static uint8_t *ram_buffer(size_t size)
{
	static struct {
		size_t size;
		uint8_t *p;
	} cache[4];

	for (size_t i = 0; i < sizeof(cache) / sizeof(cache[0]); i++) {
		if (!cache[i].p) {
			cache[i].p = malloc(size);
			cache[i].size = size;
		}
		if (cache[i].size == size)
			return cache[i].p;
	}
	return NULL;
}

/* Low RAM at 0 and, when high is not 0, high RAM at 4 GiB: the two
 * regions guest_mem_init() makes around the MMIO hole. Zeroed unless the
 * caller overwrites every byte itself. */
int fuzz_ram_init(struct fuzz_ram *r, size_t low, size_t high, bool zero)
{
	memset(r, 0, sizeof(*r));
	r->low = ram_buffer(low);
	r->high = high ? ram_buffer(high) : NULL;
	if (!r->low || (high && !r->high))
		return -1;
	if (zero) {
		memset(r->low, 0, low);
		if (high)
			memset(r->high, 0, high);
	}
	r->gm.host = r->low;
	r->gm.size = low + high;
	r->gm.regions[0] = (struct guest_mem_region){ .gpa = 0, .size = low, .host = r->low };
	r->gm.nr_regions = 1;
	if (high) {
		r->gm.regions[1] = (struct guest_mem_region){
			.gpa = FUZZ_RAM_HIGH_GPA, .size = high, .host = r->high
		};
		r->gm.nr_regions = 2;
	}
	return 0;
}

/* Copies what fits of [src, src+len) to gpa; nothing when gpa is not RAM. */
void fuzz_ram_write(const struct guest_mem *gm, uint64_t gpa, const void *src, size_t len)
{
	while (len && !guest_mem_ptr(gm, gpa, len))
		len--;
	if (len)
		memcpy(guest_mem_ptr(gm, gpa, len), src, len);
}

/* ---- the table -------------------------------------------------------- */

const struct fuzz_target fuzz_targets[] = {
	{ "elf", fuzz_elf },
	{ "bzimage", fuzz_bzimage },
	{ "system_map", fuzz_system_map },
	{ "kallsyms", fuzz_kallsyms },
	{ "trace_reader", fuzz_trace_reader },
	{ "hypercall", fuzz_hypercall },
	{ "tramp_drain", fuzz_tramp_drain },
	{ "page_walk", fuzz_page_walk },
	{ "expect", fuzz_expect },
	{ "ftrace_page", fuzz_ftrace_page },
	{ "ftrace_ring", fuzz_ftrace_ring },
	{ "ftrace_fill", fuzz_ftrace_fill },
	{ "panic_message", fuzz_panic_message },
	{ "printk_format", fuzz_printk_format },
	{ "domain_xml", fuzz_domain_xml },
	{ "tracedat_readback", fuzz_tracedat_readback },
	{ NULL, NULL },
};

const struct fuzz_target *fuzz_target_find(const char *name)
{
	for (const struct fuzz_target *t = fuzz_targets; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}
