/* SPDX-License-Identifier: MIT */
#include "arch/x86/hw/reset_control.h"

#include <string.h>

#include "arch/x86/pc_ports.h"

#define KEPT_BITS 0x0a /* SYS_RST, FULL_RST: which reset the next one is */

void reset_control_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write)
{
	struct reset_control *rc = opaque;

	(void)offset;
	if (!is_write) {
		memset(data, 0, len);
		data[0] = rc->value;
		return;
	}
	rc->value = data[0] & KEPT_BITS;
	if (data[0] & PC_RESET_CONTROL_CPU)
		rc->stop(rc->vm, RUN_END_RESET, 0, "reset control register 0xcf9");
}
