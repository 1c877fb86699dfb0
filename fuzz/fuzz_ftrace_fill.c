/* SPDX-License-Identifier: MIT */
/* libFuzzer entry point for the "ftrace_fill" target; the logic is in targets_ftrace.c. */
#include "fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_ftrace_fill(data, size);
	return 0;
}
