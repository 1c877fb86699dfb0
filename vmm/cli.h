/* SPDX-License-Identifier: MIT */
/*
 * Command-line parsing: turns argv into option structures and nothing
 * else, so every rule about options is testable without starting a VM.
 */
#ifndef VMM_CLI_H
#define VMM_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/boot/boot.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLI_DEFAULT_MEM (512ull << 20)

struct run_options {
	const char *kernel;
	const char *initrd;
	const char *append;
	const char *symbols; /* --symbols FILE, or NULL */
	uint64_t mem_size;
	double timeout_s;     /* 0: no timeout */
	const char *cpu_model;
	enum boot_protocol boot;
	bool debug_io;
	bool help;	      /* --help given: print usage, do nothing else */
	bool list_cpu_models; /* --cpu help */
};

/* Parses `run`'s options (argv[0] is "run"). 0, or -1 with an error. */
int cli_parse_run(int argc, char **argv, struct run_options *opts);

/* Parses a memory size: a number with an optional K, M, G or T suffix
 * (powers of 1024); a bare number means MiB, as with QEMU's -m. */
int cli_parse_size(const char *text, uint64_t *bytes);

/* Parses a positive number of seconds, fractions allowed. */
int cli_parse_seconds(const char *text, double *seconds);

extern const char cli_usage[];
extern const char cli_run_usage[];

#ifdef __cplusplus
}
#endif

#endif /* VMM_CLI_H */
