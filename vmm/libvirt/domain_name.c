/* SPDX-License-Identifier: MIT */
/*
 * Domain names for `earlytrace domain-xml`: checked and made up in the VMM
 * itself (no libvirt or libxml2 needed), so --name is checked while the
 * options are parsed, before the libvirt plugin is loaded.
 */
#include "vmm/libvirt/domain_name.h"

#include <stdio.h>
#include <string.h>

#include "vmm/util/error.h"
#include "vmm/util/printable.h"

int domain_xml_check_name(const char *name)
{
	if (!*name)
		return et_error("--name: a domain needs a name");
	for (const char *c = name; *c; c++) {
		if (*c == '/')
			return et_error("--name %s: libvirt refuses '/' in domain names", name);
		if (!printable_ascii((unsigned char)*c))
			return et_error("--name: only printable ASCII in a domain name");
	}
	return 0;
}

const char *domain_xml_default_name(const char *kernel, char *buf, size_t len)
{
	const char *base = strrchr(kernel, '/');
	size_t n;

	snprintf(buf, len, "earlytrace-%s", base ? base + 1 : kernel);
	n = strlen("earlytrace-");
	for (char *c = buf + n; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-' || *c == '+'))
			*c = '-';
	if (!buf[n] && n + 1 < len)
		snprintf(buf + n, len - n, "kernel");
	return buf;
}
