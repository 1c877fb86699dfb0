/* SPDX-License-Identifier: MIT */
/*
 * The PCI reset control register at port 0xcf9 (PC_PORT_RESET_CONTROL;
 * Intel's RST_CNT, as QEMU's PIIX and ICH9 machines have it). A write with
 * the RST_CPU bit (2) set resets the machine, which ends the run with
 * status 0. Three reset paths lead here: Linux's reboot=p (it writes 0x02,
 * then 0x06 or 0x0e), the ACPI reset register the FADT names (reboot=a,
 * arch/x86/boot/acpi.c) and the code at the BIOS reset vector
 * (arch/x86/kvm/reset_vector.c, reboot=b). Reads give back the other bits,
 * SYS_RST (1) and FULL_RST (3), as last written.
 */
#ifndef ARCH_X86_HW_RESET_CONTROL_H
#define ARCH_X86_HW_RESET_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/run/end.h"

#ifdef __cplusplus
extern "C" {
#endif

struct reset_control {
	run_stop_fn stop;
	void *vm;
	uint8_t value; /* SYS_RST and FULL_RST as last written */
};

void reset_control_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_HW_RESET_CONTROL_H */
