/* SPDX-License-Identifier: MIT */
/*
 * Reading a domain from libvirt and turning it into run options. The
 * connection is read-only (virConnectOpenReadOnly): earlytrace only reads
 * the definition, which any user may do, and never starts or changes the
 * domain. libvirt's own error printing is turned off; its message for the
 * first error becomes one earlytrace error line.
 */
#include "vmm/libvirt/domain.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <libxml/xmlerror.h>

#include "vmm/util/error.h"

static void quiet_libvirt(void *opaque, virErrorPtr error)
{
	(void)opaque;
	(void)error;
}

static void quiet_libxml(void *ctx, const char *msg, ...)
{
	(void)ctx;
	(void)msg;
}

/* libvirt's last error as one line: its first (an XML error goes on with
 * the offending text and a caret under it). */
static const char *libvirt_message(char *buf, size_t len)
{
	const char *msg = virGetLastErrorMessage();

	snprintf(buf, len, "%s", msg && *msg ? msg : "unknown libvirt error");
	buf[strcspn(buf, "\r\n")] = '\0';
	return buf;
}

/* As virsh does: an ID when the text is a number, then a UUID, then a name. */
static virDomainPtr lookup(virConnectPtr conn, const char *name)
{
	virDomainPtr dom = NULL;
	char *end;
	long id;

	errno = 0;
	id = strtol(name, &end, 10);
	if (*name && !*end && !errno && id >= 0 && id <= INT32_MAX)
		dom = virDomainLookupByID(conn, (int)id);
	if (!dom && strlen(name) >= 32)
		dom = virDomainLookupByUUIDString(conn, name);
	if (!dom) {
		virResetLastError();
		dom = virDomainLookupByName(conn, name);
	}
	return dom;
}

int libvirt_domain_read(struct libvirt_domain *d, const char *uri, const char *name)
{
	virConnectPtr conn;
	virDomainPtr dom;
	char msg[300], *xml, *actual_uri;
	int ret;

	memset(d, 0, sizeof(*d));
	/* libvirt prints errors on stderr by default, and libxml2 (through
	 * libvirt's test driver) its warnings: earlytrace reports them once. */
	virSetErrorFunc(NULL, quiet_libvirt);
	xmlSetGenericErrorFunc(NULL, quiet_libxml);
	conn = virConnectOpenReadOnly(uri);
	if (!conn)
		return et_error("--connect %s: cannot connect: %s",
				uri ? uri : "(libvirt's default URI)", libvirt_message(msg, sizeof(msg)));
	actual_uri = virConnectGetURI(conn);
	dom = lookup(conn, name);
	if (!dom) {
		et_error("--domain %s: not found on %s: %s", name,
			 actual_uri ? actual_uri : uri ? uri : "libvirt's default URI",
			 libvirt_message(msg, sizeof(msg)));
		free(actual_uri);
		virConnectClose(conn);
		return -1;
	}
	/* The persistent definition, as the next boot would use it. */
	xml = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
	if (!xml) {
		et_error("--domain %s: cannot read its definition: %s", name,
			 libvirt_message(msg, sizeof(msg)));
		free(actual_uri);
		virDomainFree(dom);
		virConnectClose(conn);
		return -1;
	}
	virDomainFree(dom);
	virConnectClose(conn);
	ret = libvirt_domain_parse(d, xml, strlen(xml));
	free(xml);
	if (ret) {
		free(actual_uri);
		return -1;
	}
	d->uri = actual_uri;
	return 0;
}

int libvirt_domain_apply(const struct libvirt_domain *d, struct run_options *o)
{
	if (!(o->given & RUN_GIVEN_KERNEL)) {
		if (!d->kernel)
			return et_error("domain '%s': no <kernel> in <os>: earlytrace boots a kernel "
					"directly; give the domain a direct kernel boot (<os><kernel>) "
					"or use --kernel",
					d->name);
		o->kernel = d->kernel;
	}
	if (!(o->given & RUN_GIVEN_INITRD) && d->initrd)
		o->initrd = d->initrd;
	if (!(o->given & RUN_GIVEN_APPEND) && d->cmdline)
		o->append = d->cmdline;
	if (!(o->given & RUN_GIVEN_MEM) && d->mem_size)
		o->mem_size = d->mem_size;
	if (!(o->given & RUN_GIVEN_CPUS) && d->vcpus)
		o->nr_cpus = d->vcpus;
	return 0;
}

void libvirt_domain_print_notes(const struct libvirt_domain *d)
{
	for (size_t i = 0; i < d->notes.nr; i++)
		et_warn("%s", d->notes.lines[i]);
}

int libvirt_domain_load(struct libvirt_domain *d, struct run_options *o)
{
	memset(d, 0, sizeof(*d));
	if (!o->domain)
		return 0;
	if (libvirt_domain_read(d, o->connect, o->domain) || libvirt_domain_apply(d, o))
		return -1;
	libvirt_domain_print_notes(d);
	return 0;
}
