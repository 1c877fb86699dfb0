/* SPDX-License-Identifier: MIT */
#include "arch/x86/hw/acpi_sleep.h"

#include <string.h>

#include "arch/x86/boot/acpi.h"

#define SLP_TYP(v) (((v) >> 2) & 7)
#define SLP_EN 0x20

void acpi_sleep_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write)
{
	struct acpi_sleep *s = opaque;

	if (!is_write) {
		memset(data, 0, len); /* status: no wake event */
		return;
	}
	if (offset == 0 && (data[0] & SLP_EN) && SLP_TYP(data[0]) == ACPI_SLEEP_TYPE_S5)
		s->stop(s->vm, RUN_END_POWER_OFF, 0, "ACPI S5");
}
