/* SPDX-License-Identifier: MIT */
#include "arch/x86/msr_names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	uint32_t index;
	const char *name;
} msrs[] = {
	{ 0x10, "tsc" },
	{ 0x1b, "apic_base" },
	{ 0x3a, "feature_control" },
	{ 0x48, "spec_ctrl" },
	{ 0x8b, "ucode_rev" },
	{ 0x174, "sysenter_cs" },
	{ 0x175, "sysenter_esp" },
	{ 0x176, "sysenter_eip" },
	{ 0x1a0, "misc_enable" },
	{ 0x277, "pat" },
	{ 0x2ff, "mtrr_def_type" },
	{ 0x6e0, "tsc_deadline" },
	{ 0xc0000080, "efer" },
	{ 0xc0000081, "star" },
	{ 0xc0000082, "lstar" },
	{ 0xc0000084, "syscall_mask" },
	{ 0xc0000100, "fs_base" },
	{ 0xc0000101, "gs_base" },
	{ 0xc0000102, "kernel_gs_base" },
	{ 0xc0000103, "tsc_aux" },
};

const char *arch_msr_name(uint32_t index)
{
	for (size_t i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++)
		if (msrs[i].index == index)
			return msrs[i].name;
	return NULL;
}

int arch_msr_parse(const char *text, uint32_t *index)
{
	unsigned long long v;
	char *end;

	for (size_t i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++)
		if (!strcmp(text, msrs[i].name)) {
			*index = msrs[i].index;
			return 0;
		}
	if (text[0] < '0' || text[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (*end || errno || v > UINT32_MAX)
		return -1;
	*index = (uint32_t)v;
	return 0;
}

const char *arch_msr_names_list(void)
{
	static char list[512];

	if (!list[0])
		for (size_t i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++) {
			if (i)
				strcat(list, ", ");
			strcat(list, msrs[i].name);
		}
	return list;
}
