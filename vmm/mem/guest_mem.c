/* SPDX-License-Identifier: MIT */
#include "vmm/mem/guest_mem.h"

#include <string.h>
#include <sys/mman.h>

#include "vmm/util/error.h"

/*
 * Guest RAM sits between two inaccessible guard regions: should any
 * access made for the guest ever run past either end of RAM despite the
 * bounds checks, it faults at once (the sanitizer build reports it)
 * instead of reading or writing whatever the host mapped next to it.
 */
#define GUARD_BYTES (2ull << 20) /* keeps RAM as aligned as the mapping (huge pages) */

int guest_mem_init(struct guest_mem *gm, uint64_t size)
{
	const struct guest_ram_layout *layout = arch_guest_ram_layout();
	uint64_t low;
	void *host;

	memset(gm, 0, sizeof(*gm));
	if (size < layout->min_size)
		return et_error("guest RAM of %llu bytes is too small (minimum %llu MiB)",
				(unsigned long long)size,
				(unsigned long long)(layout->min_size >> 20));
	if (size & 0xfff)
		return et_error("guest RAM size %llu is not a multiple of 4 KiB",
				(unsigned long long)size);

	if (size > UINT64_MAX - 2 * GUARD_BYTES)
		return et_error("guest RAM of %llu bytes is too large", (unsigned long long)size);
	/* NORESERVE: pages cost host memory only once the guest touches them.
	 * The whole reservation is inaccessible, then RAM is mapped inside. */
	host = mmap(NULL, size + 2 * GUARD_BYTES, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (host == MAP_FAILED)
		return et_error_errno("cannot map %llu MiB of guest RAM",
				      (unsigned long long)(size >> 20));
	host = (uint8_t *)host + GUARD_BYTES;
	if (mprotect(host, size, PROT_READ | PROT_WRITE)) {
		et_error_errno("cannot map %llu MiB of guest RAM",
			       (unsigned long long)(size >> 20));
		munmap((uint8_t *)host - GUARD_BYTES, size + 2 * GUARD_BYTES);
		return -1;
	}
	madvise(host, size, MADV_MERGEABLE);

	gm->host = host;
	gm->size = size;
	low = size < layout->hole_start ? size : layout->hole_start;
	gm->regions[0] = (struct guest_mem_region){ .gpa = 0, .size = low, .host = gm->host };
	gm->nr_regions = 1;
	if (size > low) {
		gm->regions[1] = (struct guest_mem_region){
			.gpa = layout->hole_end,
			.size = size - low,
			.host = gm->host + low,
		};
		gm->nr_regions = 2;
	}
	return 0;
}

void guest_mem_free(struct guest_mem *gm)
{
	if (gm->host)
		munmap(gm->host - GUARD_BYTES, gm->size + 2 * GUARD_BYTES);
	memset(gm, 0, sizeof(*gm));
}

void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	for (unsigned i = 0; i < gm->nr_regions; i++) {
		const struct guest_mem_region *r = &gm->regions[i];
		uint64_t off;

		if (gpa < r->gpa)
			continue;
		off = gpa - r->gpa;
		/* Written so that no sum can overflow for hostile gpa/len. */
		if (off > r->size || len > r->size - off)
			continue;
		return r->host + off;
	}
	return NULL;
}

int guest_mem_write(const struct guest_mem *gm, uint64_t gpa, const void *src, uint64_t len)
{
	void *dst = guest_mem_ptr(gm, gpa, len);

	if (!dst)
		return et_error("guest range 0x%llx+0x%llx is not RAM",
				(unsigned long long)gpa, (unsigned long long)len);
	memcpy(dst, src, len);
	return 0;
}

int guest_mem_read(const struct guest_mem *gm, uint64_t gpa, void *dst, uint64_t len)
{
	const void *src = guest_mem_ptr(gm, gpa, len);

	if (!src)
		return et_error("guest range 0x%llx+0x%llx is not RAM",
				(unsigned long long)gpa, (unsigned long long)len);
	memcpy(dst, src, len);
	return 0;
}

uint64_t guest_mem_low_end(const struct guest_mem *gm)
{
	return gm->regions[0].size;
}
