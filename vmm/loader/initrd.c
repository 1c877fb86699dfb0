/* SPDX-License-Identifier: MIT */
#include "vmm/loader/initrd.h"

#include <stdlib.h>

#include "vmm/loader/kernel_image.h"
#include "vmm/util/error.h"
#include "vmm/util/input_file.h"

#define PAGE_MASK 0xfffull

int initrd_load(const struct guest_mem *gm, const char *path, uint64_t kernel_end,
		uint64_t *paddr, uint64_t *size)
{
	uint64_t top = guest_mem_low_end(gm);
	uint64_t room = top > kernel_end ? top - ((kernel_end + PAGE_MASK) & ~PAGE_MASK) : 0;
	uint8_t *data;
	size_t len;
	int ret;

	if (input_read_whole_file(path, KERNEL_IMAGE_MAX_SIZE, &data, &len))
		return -1;
	if (!len) {
		free(data);
		return et_error("initrd %s is empty", path);
	}
	if (len > room) {
		free(data);
		return et_error("initrd %s (%zu KiB) does not fit in guest RAM above the kernel "
				"(%llu KiB free); try a larger --mem", path, len >> 10,
				(unsigned long long)(room >> 10));
	}
	*paddr = (top - len) & ~PAGE_MASK;
	*size = len;
	ret = guest_mem_write(gm, *paddr, data, len);
	free(data);
	return ret;
}
