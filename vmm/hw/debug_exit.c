/* SPDX-License-Identifier: MIT */
#include "vmm/hw/debug_exit.h"

#include <string.h>

void debug_exit_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write)
{
	struct debug_exit *dev = opaque;

	(void)offset;
	if (!is_write) {
		/* Reads identify the port: the low byte of the ABI version. */
		memset(data, 0, len);
		data[0] = 1;
		return;
	}
	/* Only the low byte matters: a process exit status is 8 bits. */
	dev->stop(dev->vm, RUN_END_DEBUG_EXIT, data[0], NULL);
}
