/* SPDX-License-Identifier: MIT */
/*
 * Names of a few architectural MSRs, for --trace-msr and for reports
 * (lower case, as Linux's msr-index.h names them without MSR_IA32_).
 */
#ifndef ARCH_X86_MSR_NAMES_H
#define ARCH_X86_MSR_NAMES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The name of MSR index, or NULL when it is not one we name. */
const char *arch_msr_name(uint32_t index);

/* A name from the table, or a number (0x hex or decimal). 0, or -1. */
int arch_msr_parse(const char *text, uint32_t *index);

/* The names, comma-separated, for messages. */
const char *arch_msr_names_list(void);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_MSR_NAMES_H */
