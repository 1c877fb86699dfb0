/* SPDX-License-Identifier: MIT */
/* The one symbol earlytrace-libvirt.so exports to the VMM (plugin.h). */
#include "vmm/libvirt/domain.h"
#include "vmm/libvirt/domain_xml.h"
#include "vmm/libvirt/plugin.h"

__attribute__((visibility("default"))) extern const struct libvirt_plugin earlytrace_libvirt_plugin;

const struct libvirt_plugin earlytrace_libvirt_plugin = {
	.abi_version = LIBVIRT_PLUGIN_ABI_VERSION,
	.run_options_size = sizeof(struct run_options),
	.domain_size = sizeof(struct libvirt_domain),
	.domain_load = libvirt_domain_load,
	.domain_free = libvirt_domain_free,
	.domain_xml_write = domain_xml_write,
	.notes_free = libvirt_notes_free,
};
