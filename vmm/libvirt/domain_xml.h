/* SPDX-License-Identifier: MIT */
/*
 * Writing a libvirt domain definition (QEMU/KVM, direct kernel boot) for
 * the machine a set of run options describes, so a traced setup can move
 * into libvirt (`earlytrace domain-xml`, docs/libvirt.md).
 */
#ifndef VMM_LIBVIRT_DOMAIN_XML_H
#define VMM_LIBVIRT_DOMAIN_XML_H

#include "vmm/libvirt/domain.h"
#include "vmm/run/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The definition for o, named `name`: its memory, one vCPU, the kernel,
 * initrd and command line (paths made absolute; the files must exist), the
 * host's CPU, ACPI (so the guest can power off), COM1 as the serial
 * console and no balloon, like earlytrace's machine; a reset ends the
 * domain as it ends a run.
 * Options libvirt has no place for (--timeout, --symbols, ...) each get a
 * line in notes. Returns the document (malloc'd, NUL-terminated, no XML
 * declaration), or NULL with an error.
 */
char *domain_xml_write(const struct run_options *o, const char *name,
		       struct libvirt_notes *notes);

#ifdef __cplusplus
}
#endif

#endif /* VMM_LIBVIRT_DOMAIN_XML_H */
