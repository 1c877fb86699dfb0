/* SPDX-License-Identifier: MIT */
/*
 * Guest RAM: one host mapping, split into at most two guest-physical
 * regions around the architecture's hole for devices (on a PC the 32-bit
 * MMIO hole: low RAM from 0, high RAM from 4 GiB).
 *
 * Every access the VMM makes on behalf of a guest address goes through
 * guest_mem_ptr(), which checks the whole range lies inside one RAM region;
 * the guest is untrusted, so there is no unchecked path.
 */
#ifndef VMM_MEM_GUEST_MEM_H
#define VMM_MEM_GUEST_MEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GUEST_MEM_MAX_REGIONS 2

struct guest_mem_region {
	uint64_t gpa;  /* guest-physical start */
	uint64_t size; /* bytes */
	uint8_t *host; /* host address of gpa */
};

struct guest_mem {
	uint8_t *host;	/* the whole mapping */
	uint64_t size;	/* total RAM bytes */
	unsigned nr_regions;
	struct guest_mem_region regions[GUEST_MEM_MAX_REGIONS];
};

/* Where an architecture puts RAM (arch/<arch>/ram_layout.c): the least
 * RAM a guest may have, and the guest-physical hole RAM goes around
 * (start == end: none). */
struct guest_ram_layout {
	uint64_t min_size;
	uint64_t hole_start, hole_end;
};
const struct guest_ram_layout *arch_guest_ram_layout(void);

/* Maps `size` bytes of anonymous memory and lays it out around the
 * architecture's hole. Returns 0, or -1 with et_last_error() set. */
int guest_mem_init(struct guest_mem *gm, uint64_t size);
void guest_mem_free(struct guest_mem *gm);

/* Host pointer for [gpa, gpa+len) if that range is entirely RAM, else NULL.
 * len 0 is allowed and checks gpa alone (gpa may equal a region's end). */
void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len);

/* Copies in or out with the same check; 0 on success, -1 (with error). */
int guest_mem_write(const struct guest_mem *gm, uint64_t gpa, const void *src, uint64_t len);
int guest_mem_read(const struct guest_mem *gm, uint64_t gpa, void *dst, uint64_t len);

/* Highest guest-physical address + 1 of low RAM (below the MMIO hole). */
uint64_t guest_mem_low_end(const struct guest_mem *gm);

#ifdef __cplusplus
}
#endif

#endif /* VMM_MEM_GUEST_MEM_H */
