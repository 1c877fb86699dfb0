/* SPDX-License-Identifier: MIT */
/*
 * i8042 keyboard controller, reduced to what a guest without a keyboard
 * uses: the command/status port, the controller configuration byte, the
 * self tests Linux's driver runs, and the reset line (command 0xfe, or
 * output-port bit 0 cleared) that ends the run cleanly.
 */
#ifndef ARCH_X86_HW_I8042_H
#define ARCH_X86_HW_I8042_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/run/end.h"

#ifdef __cplusplus
extern "C" {
#endif

struct i8042 {
	uint8_t config;		/* controller configuration byte */
	uint8_t pending_cmd;	/* command waiting for its data byte, or 0 */
	uint8_t out[4];		/* replies waiting in the output buffer */
	unsigned out_count;
	run_stop_fn stop;
	void *vm;
};

void i8042_init(struct i8042 *kbc, run_stop_fn stop, void *vm);
/* The data (PC_PORT_I8042_DATA) and command (PC_PORT_I8042_CMD) ports. */
void i8042_data_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write);
void i8042_cmd_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_HW_I8042_H */
