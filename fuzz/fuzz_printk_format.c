/* SPDX-License-Identifier: MIT */
/* libFuzzer entry point for the "printk_format" target; the logic is in targets_printk.c. */
#include "fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_printk_format(data, size);
	return 0;
}
