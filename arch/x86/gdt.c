/* SPDX-License-Identifier: MIT */
#include "arch/x86/gdt.h"

#include <string.h>

uint64_t gdt_entry(uint16_t flags, uint32_t base, uint32_t limit)
{
	return ((uint64_t)(base & 0xff000000u) << 32) |
	       ((uint64_t)(flags & 0xf0ffu) << 40) |
	       ((uint64_t)(limit & 0x000f0000u) << 32) |
	       ((uint64_t)(base & 0x00ffffffu) << 16) |
	       (uint64_t)(limit & 0x0000ffffu);
}

struct kvm_segment gdt_to_kvm_segment(uint64_t entry, unsigned index)
{
	struct kvm_segment seg;
	uint32_t limit = (uint32_t)((entry & 0xffff) | ((entry >> 32) & 0xf0000));

	memset(&seg, 0, sizeof(seg));
	seg.base = ((entry >> 16) & 0xffffff) | (((entry >> 56) & 0xff) << 24);
	seg.g = (entry >> 55) & 1;
	seg.limit = seg.g ? (limit << 12) | 0xfff : limit;
	seg.selector = (uint16_t)(index * 8);
	seg.type = (entry >> 40) & 0xf;
	seg.s = (entry >> 44) & 1;
	seg.dpl = (entry >> 45) & 3;
	seg.present = (entry >> 47) & 1;
	seg.avl = (entry >> 52) & 1;
	seg.l = (entry >> 53) & 1;
	seg.db = (entry >> 54) & 1;
	seg.unusable = !seg.present;
	return seg;
}
