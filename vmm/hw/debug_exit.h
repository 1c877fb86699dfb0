/* SPDX-License-Identifier: MIT */
/*
 * Debug-exit port: the guest ends the run with a status of its choice,
 * which becomes the VMM's exit status (see ET_PORT_DEBUG_EXIT).
 */
#ifndef VMM_HW_DEBUG_EXIT_H
#define VMM_HW_DEBUG_EXIT_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/run/end.h"

#ifdef __cplusplus
extern "C" {
#endif

struct debug_exit {
	run_stop_fn stop;
	void *vm;
};

void debug_exit_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write);

#ifdef __cplusplus
}
#endif

#endif /* VMM_HW_DEBUG_EXIT_H */
