/* SPDX-License-Identifier: MIT */
#include "trampolines/templates.h"

/* Symbols of the assembled templates (in the VMM's read-only data). */
extern const uint8_t et_tramp64_start[], et_tramp64_record[], et_tramp64_oneshot[],
	et_tramp64_record_smp[], et_tramp64_header[], et_tramp64_end[];
extern const uint32_t et_tramp64_end_relocs[], et_tramp64_end_relocs_end[],
	et_tramp64_base_relocs[], et_tramp64_base_relocs_end[], et_tramp64_stride_relocs[],
	et_tramp64_stride_relocs_end[];
extern const uint8_t et_tramp32_start[], et_tramp32_record[], et_tramp32_oneshot[],
	et_tramp32_record_smp[], et_tramp32_header[], et_tramp32_end[];
extern const uint32_t et_tramp32_end_relocs[], et_tramp32_end_relocs_end[],
	et_tramp32_header_relocs[], et_tramp32_header_relocs_end[], et_tramp32_stride_relocs[],
	et_tramp32_stride_relocs_end[];

const struct tramp_template *tramp_template_for(unsigned elf_class)
{
	static struct tramp_template t64, t32;

	if (elf_class == 64) {
		t64 = (struct tramp_template){
			.arch = "x86_64",
			.bytes = et_tramp64_start,
			.size = (size_t)(et_tramp64_end - et_tramp64_start),
			.header = (size_t)(et_tramp64_header - et_tramp64_start),
			.record_entry = (size_t)(et_tramp64_record - et_tramp64_start),
			.oneshot_entry = (size_t)(et_tramp64_oneshot - et_tramp64_start),
			.smp_record_entry = (size_t)(et_tramp64_record_smp - et_tramp64_start),
			.word_bytes = 8,
			.end_relocs = et_tramp64_end_relocs,
			.nr_end_relocs = (size_t)(et_tramp64_end_relocs_end - et_tramp64_end_relocs),
			.base_relocs = et_tramp64_base_relocs,
			.nr_base_relocs =
				(size_t)(et_tramp64_base_relocs_end - et_tramp64_base_relocs),
			.stride_relocs = et_tramp64_stride_relocs,
			.nr_stride_relocs =
				(size_t)(et_tramp64_stride_relocs_end - et_tramp64_stride_relocs),
		};
		return &t64;
	}
	if (elf_class == 32) {
		t32 = (struct tramp_template){
			.arch = "i386",
			.bytes = et_tramp32_start,
			.size = (size_t)(et_tramp32_end - et_tramp32_start),
			.header = (size_t)(et_tramp32_header - et_tramp32_start),
			.record_entry = (size_t)(et_tramp32_record - et_tramp32_start),
			.oneshot_entry = (size_t)(et_tramp32_oneshot - et_tramp32_start),
			.smp_record_entry = (size_t)(et_tramp32_record_smp - et_tramp32_start),
			.word_bytes = 4,
			.end_relocs = et_tramp32_end_relocs,
			.nr_end_relocs = (size_t)(et_tramp32_end_relocs_end - et_tramp32_end_relocs),
			.base_relocs = et_tramp32_header_relocs,
			.nr_base_relocs =
				(size_t)(et_tramp32_header_relocs_end - et_tramp32_header_relocs),
			.stride_relocs = et_tramp32_stride_relocs,
			.nr_stride_relocs =
				(size_t)(et_tramp32_stride_relocs_end - et_tramp32_stride_relocs),
		};
		return &t32;
	}
	return NULL;
}
