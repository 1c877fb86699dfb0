/* SPDX-License-Identifier: MIT */
/*
 * libvirt domains as earlytrace machines (docs/libvirt.md).
 *
 * `--connect URI --domain NAME` reads a domain's definition through the
 * libvirt API (a read-only connection, virDomainGetXMLDesc) and takes from
 * its direct kernel boot the kernel, initrd, command line and memory. The
 * definition is parsed with libxml2 (domain_parse.c); what earlytrace
 * cannot do is an error naming the element (no <kernel>, more than one
 * vCPU, a guest that is not x86 or not hvm, a non-KVM domain type), and
 * what it ignores is a note, one line each, never silence: devices it
 * does not have (disks, network interfaces, graphics...), firmware,
 * features such as ACPI. Options given on the command line win over the
 * domain, wherever they stand on it.
 */
#ifndef VMM_LIBVIRT_DOMAIN_H
#define VMM_LIBVIRT_DOMAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmm/run/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lines telling the user what earlytrace leaves out. */
struct libvirt_notes {
	char **lines;
	size_t nr;
};

/* Adds a printf-formatted line; 0, or -1 when out of memory. */
int libvirt_note(struct libvirt_notes *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void libvirt_notes_free(struct libvirt_notes *n);

/* What earlytrace takes from a domain. Strings are owned; NULL when the
 * domain does not have the element. */
struct libvirt_domain {
	char *name;
	char *uri;	   /* the connection's URI, as libvirt names it */
	char *kernel;	   /* <os><kernel> */
	char *initrd;	   /* <os><initrd> */
	char *cmdline;	   /* <os><cmdline> */
	uint64_t mem_size; /* <memory>, in bytes; 0 when absent */
	unsigned vcpus;	   /* <vcpu> (its current= when given) */
	struct libvirt_notes notes; /* "domain 'NAME': <disk> vda: ignored, ..." */
};

/* Parses a domain definition (libvirt's domain XML, len bytes) and checks
 * earlytrace can run it. A missing <kernel> is not an error here (an
 * explicit --kernel may stand in; libvirt_domain_apply() decides). 0, or
 * -1 with et_last_error() naming the domain and the element. */
int libvirt_domain_parse(struct libvirt_domain *d, const char *xml, size_t len);

/* Reads domain `name` (a name, a UUID or an ID, as virsh looks them up)
 * over a read-only connection to uri (NULL: libvirt's default URI) and
 * parses it. 0, or -1 with et_last_error() set. */
int libvirt_domain_read(struct libvirt_domain *d, const char *uri, const char *name);

/* Fills the options the command line did not give (o->given) from d:
 * kernel, initrd, append and mem. -1 with an error when neither the domain
 * nor --kernel names a kernel. */
int libvirt_domain_apply(const struct libvirt_domain *d, struct run_options *o);

/* For commands: when o names a domain (--domain), reads it from
 * o->connect, applies it to o and prints its notes on stderr, each as
 * "earlytrace: domain 'NAME': ...". d must outlive o's use (o points into
 * it); free it with libvirt_domain_free() either way. Without --domain,
 * does nothing. 0, or -1 with an error. */
int libvirt_domain_load(struct libvirt_domain *d, struct run_options *o);

/* Its notes, each an et_warn() line on stderr. */
void libvirt_domain_print_notes(const struct libvirt_domain *d);
void libvirt_domain_free(struct libvirt_domain *d);

#ifdef __cplusplus
}
#endif

#endif /* VMM_LIBVIRT_DOMAIN_H */
