/* SPDX-License-Identifier: MIT */
/* Domain names for `earlytrace domain-xml` (domain_name.c). */
#ifndef VMM_LIBVIRT_DOMAIN_NAME_H
#define VMM_LIBVIRT_DOMAIN_NAME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A name for a domain booting `kernel`: "earlytrace-" and the file's name,
 * every character libvirt or a shell would trip on made '-'; into buf. */
const char *domain_xml_default_name(const char *kernel, char *buf, size_t len);

/* Checks a domain name as libvirt's QEMU driver does (not empty, no '/',
 * printable). 0, or -1 with an error. */
int domain_xml_check_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* VMM_LIBVIRT_DOMAIN_NAME_H */
