/* SPDX-License-Identifier: MIT */
/*
 * A trace.dat read the way trace-cmd and KernelShark read it: libtracecmd
 * opens the file and iterates its records over all CPUs in time order,
 * libtraceevent decodes each by the file's format texts and names
 * addresses with the file's kallsyms. In C because libtracefs's header,
 * which trace-cmd.h includes, is not C++.
 */
#ifndef TESTS_TRACEDAT_READ_H
#define TESTS_TRACEDAT_READ_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DAT_MAX_FIELDS 16

struct dat_field {
	const char *name;
	int is_string;		/* a string (str, len) rather than a number */
	unsigned long long value;
	const char *str;
	size_t len;
	const char *function;	/* address fields (ip, parent_ip, func, rip): the
				 * function libtraceevent names, NULL for none */
};

struct dat_record {
	int cpu;
	unsigned long long ts;	/* as libtracecmd reports it */
	const char *system, *name; /* NULL when no format describes it */
	int type;
	unsigned long long flags; /* common_flags */
	size_t nr_fields;
	struct dat_field fields[DAT_MAX_FIELDS];
};

typedef void (*dat_record_fn)(void *ctx, const struct dat_record *rec);

/* Calls fn for every record; *cpus gets the file's CPU count. 0, or -1
 * when libtracecmd cannot open or iterate the file. */
int dat_read(const char *path, int *cpus, dat_record_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_TRACEDAT_READ_H */
