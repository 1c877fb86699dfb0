/* SPDX-License-Identifier: MIT */
/* libFuzzer entry point for the "tracedat_readback" target; the logic is in targets_tracedat.c. */
#include "fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_tracedat_readback(data, size);
	return 0;
}
