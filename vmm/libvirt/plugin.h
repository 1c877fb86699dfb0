/* SPDX-License-Identifier: MIT */
/*
 * The libvirt part of earlytrace as a plugin, loaded only when a command
 * needs it (--domain, domain-xml).
 *
 * libvirt and libxml2 pull about sixty shared libraries into a process
 * (glib, gnutls, curl, krb5, ICU...): linked into the VMM, loading and
 * relocating them took longer than starting the VM itself and held about
 * 12 MiB of resident memory in every run. So vmm/libvirt/ is built into
 * earlytrace-libvirt.so, beside the earlytrace binary, and the VMM
 * dlopen()s it on first use; a run without --domain never maps libvirt.
 * The plugin calls back into the VMM only for et_error() and
 * boot_protocol_name(), which the VMM exports (plugin.exports).
 */
#ifndef VMM_LIBVIRT_PLUGIN_H
#define VMM_LIBVIRT_PLUGIN_H

#include <stddef.h>

#include "vmm/libvirt/domain.h"
#include "vmm/run/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plugin's file name, and the environment variable that overrides
 * where it is looked for (a full path); by default it sits beside the
 * earlytrace binary. */
#define LIBVIRT_PLUGIN_FILE "earlytrace-libvirt.so"
#define LIBVIRT_PLUGIN_ENV "EARLYTRACE_LIBVIRT_PLUGIN"

/* What the plugin exports, as one symbol. The VMM and the plugin share
 * struct layouts, so a plugin from another build is refused: abi_version
 * changes with this table, the sizes catch changed option structures. */
#define LIBVIRT_PLUGIN_ABI_VERSION 1
#define LIBVIRT_PLUGIN_SYMBOL "earlytrace_libvirt_plugin"

struct libvirt_plugin {
	unsigned abi_version;
	size_t run_options_size;
	size_t domain_size;
	int (*domain_load)(struct libvirt_domain *d, struct run_options *o);
	void (*domain_free)(struct libvirt_domain *d);
	char *(*domain_xml_write)(const struct run_options *o, const char *name,
				  struct libvirt_notes *notes);
	void (*notes_free)(struct libvirt_notes *n);
};

/*
 * As libvirt_domain_load() (domain.h): without --domain it does nothing
 * and loads nothing; with it, loads the plugin first. 0, or -1 with an
 * error (also when the plugin cannot be loaded: its path and why).
 */
int libvirt_plugin_domain_load(struct libvirt_domain *d, struct run_options *o);

/* Frees what libvirt_plugin_domain_load() filled; a zeroed d (no
 * --domain) needs no plugin. */
void libvirt_plugin_domain_free(struct libvirt_domain *d);

/* domain_xml_write() (domain_xml.h) through the plugin; NULL with an error. */
char *libvirt_plugin_domain_xml_write(const struct run_options *o, const char *name,
				      struct libvirt_notes *notes);

/* Frees notes filled by the plugin. */
void libvirt_plugin_notes_free(struct libvirt_notes *n);

#ifdef __cplusplus
}
#endif

#endif /* VMM_LIBVIRT_PLUGIN_H */
