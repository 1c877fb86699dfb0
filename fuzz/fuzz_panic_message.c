/* SPDX-License-Identifier: MIT */
/* libFuzzer entry point for the "panic_message" target; the logic is in targets.c. */
#include "fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_panic_message(data, size);
	return 0;
}
