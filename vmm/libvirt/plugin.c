/* SPDX-License-Identifier: MIT */
/*
 * Loading earlytrace-libvirt.so on first use (plugin.h explains why it is
 * a plugin). It is looked for at $EARLYTRACE_LIBVIRT_PLUGIN, else beside
 * the running binary (/proc/self/exe), never on the library search path:
 * the VMM must not pick up a plugin from another build.
 */
#include "vmm/libvirt/plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/util/error.h"

static const struct libvirt_plugin *loaded;

static int plugin_path(char *buf, size_t len)
{
	const char *env = getenv(LIBVIRT_PLUGIN_ENV);
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return et_error_errno("libvirt support: cannot find the earlytrace binary's folder "
				      "(/proc/self/exe)");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*(slash ? slash + 1 : exe) = '\0';
	if ((size_t)snprintf(buf, len, "%s%s", exe, LIBVIRT_PLUGIN_FILE) >= len)
		return et_error("libvirt support: path of %s too long", LIBVIRT_PLUGIN_FILE);
	return 0;
}

static const struct libvirt_plugin *plugin(void)
{
	char path[PATH_MAX + 32];
	const struct libvirt_plugin *p;
	const char *why;
	void *handle;

	if (loaded)
		return loaded;
	if (plugin_path(path, sizeof(path)))
		return NULL;
	/* RTLD_LOCAL: libvirt's libraries stay out of the VMM's namespace;
	 * RTLD_NOW: a plugin that cannot resolve fails here, not mid-run. */
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		why = dlerror(); /* names the file */
		et_error("libvirt support (--domain, domain-xml): cannot load its plugin: %s",
			 why ? why : path);
		return NULL;
	}
	p = dlsym(handle, LIBVIRT_PLUGIN_SYMBOL);
	if (!p || p->abi_version != LIBVIRT_PLUGIN_ABI_VERSION ||
	    p->run_options_size != sizeof(struct run_options) ||
	    p->domain_size != sizeof(struct libvirt_domain)) {
		et_error("%s: not the libvirt plugin of this earlytrace build (rebuild both)", path);
		dlclose(handle);
		return NULL;
	}
	loaded = p; /* stays loaded: libvirt keeps threads and state */
	return p;
}

int libvirt_plugin_domain_load(struct libvirt_domain *d, struct run_options *o)
{
	const struct libvirt_plugin *p;

	memset(d, 0, sizeof(*d));
	if (!o->domain)
		return 0;
	p = plugin();
	return p ? p->domain_load(d, o) : -1;
}

void libvirt_plugin_domain_free(struct libvirt_domain *d)
{
	/* Only a loaded plugin can have filled d. */
	if (loaded)
		loaded->domain_free(d);
}

char *libvirt_plugin_domain_xml_write(const struct run_options *o, const char *name,
				      struct libvirt_notes *notes)
{
	const struct libvirt_plugin *p = plugin();

	return p ? p->domain_xml_write(o, name, notes) : NULL;
}

void libvirt_plugin_notes_free(struct libvirt_notes *n)
{
	if (loaded)
		loaded->notes_free(n);
}
