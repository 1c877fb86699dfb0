/* SPDX-License-Identifier: MIT */
/*
 * The "domain_xml" fuzz target's logic: libvirt's domain XML, as
 * `--domain` reads it from a libvirt daemon (vmm/libvirt/domain_parse.c).
 * Separate from targets.c because the parser lives in the libvirt part
 * (libxml2), which gen-ninja.sh and host.ninja link in for it.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/targets.h"
#include "vmm/libvirt/domain.h"
#include "vmm/util/error.h"

/* What the user sees, notes and errors, is one line each, whatever the
 * definition holds. */
static void check_line(const char *s)
{
	if (s && strchr(s, '\n'))
		abort();
}

int fuzz_domain_xml(const uint8_t *data, size_t size)
{
	struct libvirt_domain d;

	et_clear_error();
	if (libvirt_domain_parse(&d, (const char *)data, size)) {
		check_line(et_last_error());
		return 0;
	}
	/* The name is the domain's own (libvirt looks it up as it is);
	 * what is shown of it goes through the notes and errors. */
	for (size_t i = 0; i < d.notes.nr; i++)
		check_line(d.notes.lines[i]);
	/* Strings are read whole: a stray terminator would end them early. */
	if (d.kernel)
		(void)strlen(d.kernel);
	if (d.initrd)
		(void)strlen(d.initrd);
	if (d.cmdline)
		(void)strlen(d.cmdline);
	libvirt_domain_free(&d);
	return 0;
}
