/* SPDX-License-Identifier: MIT */
/* libFuzzer entry point for the "domain_xml" target; the logic is in targets_libvirt.c. */
#include "fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_domain_xml(data, size);
	return 0;
}
