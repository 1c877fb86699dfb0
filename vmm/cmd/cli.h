/* SPDX-License-Identifier: MIT */
/*
 * Command-line parsing: turns argv into option structures and nothing
 * else, so every rule about options is testable without starting a VM.
 */
#ifndef VMM_CMD_CLI_H
#define VMM_CMD_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/run/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses `run`'s options (argv[0] is "run"). 0, or -1 with an error. */
int cli_parse_run(int argc, char **argv, struct run_options *opts);

/* The machine options, shared by every command that boots a kernel: the
 * getopt_long entries, their short letters, and the handler. */
enum {
	CLI_OPT_TIMEOUT = 256,
	CLI_OPT_CPU,
	CLI_OPT_BOOT,
	CLI_OPT_SYMBOLS,
	CLI_OPT_DEBUG_IO,
	CLI_OPT_CONNECT,
	CLI_OPT_DOMAIN,
	CLI_OPT_ON_PANIC,
	CLI_OPT_NMI_AT,
	CLI_OPT_CPUS,
	CLI_OPT_FIRST_FREE = 300, /* commands number their own options from here */
};
#define CLI_RUN_SHORT_OPTIONS ":k:i:p:m:h"
#define CLI_RUN_LONG_OPTIONS                                       \
	{ "kernel", required_argument, NULL, 'k' },                \
	{ "initrd", required_argument, NULL, 'i' },                \
	{ "append", required_argument, NULL, 'p' },                \
	{ "mem", required_argument, NULL, 'm' },                   \
	{ "timeout", required_argument, NULL, CLI_OPT_TIMEOUT },   \
	{ "cpu", required_argument, NULL, CLI_OPT_CPU },           \
	{ "boot", required_argument, NULL, CLI_OPT_BOOT },         \
	{ "symbols", required_argument, NULL, CLI_OPT_SYMBOLS },   \
	{ "debug-io", no_argument, NULL, CLI_OPT_DEBUG_IO },       \
	{ "connect", required_argument, NULL, CLI_OPT_CONNECT },   \
	{ "domain", required_argument, NULL, CLI_OPT_DOMAIN },     \
	{ "on-panic", required_argument, NULL, CLI_OPT_ON_PANIC }, \
	{ "nmi-at", required_argument, NULL, CLI_OPT_NMI_AT },     \
	{ "cpus", required_argument, NULL, CLI_OPT_CPUS },         \
	{ "help", no_argument, NULL, 'h' }

void cli_run_defaults(struct run_options *opts);
/* 1 if `c` was a machine option (applied), 0 if not one, -1 on a bad value. */
int cli_run_option(int c, const char *arg, struct run_options *opts);
/* After parsing: a kernel or a domain is required (not for --help), and
 * --connect only goes with --domain. 0, or -1 with an error naming cmd. */
int cli_run_check(const char *cmd, const struct run_options *opts);
/* The error for getopt's '?' or ':' return, naming the command. */
int cli_bad_option(const char *cmd, int argc, char **argv, int c);
/* After the options: the one trace file a command reads (argv[optind]),
 * or an error naming cmd when there is none or more than one. */
int cli_trace_file_operand(const char *cmd, int argc, char **argv, const char **path);

/* Parses a memory size: a number with an optional K, M, G or T suffix
 * (powers of 1024); a bare number means MiB, as with QEMU's -m. */
int cli_parse_size(const char *text, uint64_t *bytes);

/* Parses --cpus's value: a whole number from 1 to `max`. */
int cli_parse_cpus(const char *text, unsigned max, unsigned *cpus);

/* Parses --on-panic's value: exit or continue. */
int cli_parse_panic_action(const char *text, enum panic_action *action);

/* Parses a positive number of seconds, fractions allowed. */
int cli_parse_seconds(const char *text, double *seconds);

extern const char cli_usage[];
extern const char cli_run_usage[];

#ifdef __cplusplus
}
#endif

#endif /* VMM_CMD_CLI_H */
