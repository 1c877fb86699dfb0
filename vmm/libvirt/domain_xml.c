/* SPDX-License-Identifier: MIT */
/*
 * The domain definition is built as a libxml2 tree and serialized by
 * libxml2, so names, paths and the command line are escaped as XML wants.
 * Text XML 1.0 cannot hold (control characters, invalid UTF-8) is refused
 * with an error naming the option.
 */
#include "vmm/libvirt/domain_xml.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>
#include <libxml/xmlsave.h>

#include "arch/arch.h"
#include "vmm/libvirt/domain_name.h"
#include "vmm/util/error.h"
#include "vmm/util/version.h"

/* XML 1.0 holds tab, line feed, carriage return and no other control
 * character, and only valid UTF-8. */
static int check_text(const char *what, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if ((*c < 0x20 && *c != '\t' && *c != '\n' && *c != '\r') || *c == 0x7f)
			return et_error("%s: control character 0x%02x cannot be written in XML", what,
					*c);
	if (!xmlCheckUTF8((const xmlChar *)s))
		return et_error("%s: not valid UTF-8, which XML needs", what);
	return 0;
}

static char *absolute(const char *option, const char *path)
{
	char *abs = realpath(path, NULL);

	if (!abs)
		et_error_errno("%s %s", option, path);
	return abs;
}

static xmlNodePtr add(xmlNodePtr parent, const char *name, const char *text)
{
	return xmlNewTextChild(parent, NULL, (const xmlChar *)name, (const xmlChar *)text);
}

static void set(xmlNodePtr n, const char *name, const char *value)
{
	xmlNewProp(n, (const xmlChar *)name, (const xmlChar *)value);
}

static int notes_for_options(const struct run_options *o, struct libvirt_notes *notes)
{
	if (o->timeout_s > 0 &&
	    libvirt_note(notes, "domain-xml: --timeout has no place in a domain definition; "
				"left out"))
		return -1;
	if (o->symbols &&
	    libvirt_note(notes, "domain-xml: --symbols is earlytrace's own; left out"))
		return -1;
	if (o->debug_io && libvirt_note(notes, "domain-xml: --debug-io is earlytrace's own; left out"))
		return -1;
	if (o->on_panic != PANIC_ACTION_EXIT &&
	    libvirt_note(notes, "domain-xml: --on-panic is earlytrace's own; left out"))
		return -1;
	if (o->boot != BOOT_AUTO &&
	    libvirt_note(notes, "domain-xml: --boot %s: QEMU chooses the protocol itself (PVH for "
				"an ELF with the PVH note, the Linux boot protocol for a bzImage)",
			 boot_protocol_name(o->boot)))
		return -1;
	if (strcmp(o->cpu_model, "auto") && strcmp(o->cpu_model, "host") &&
	    libvirt_note(notes, "domain-xml: --cpu %s: written as the host's CPU "
				"(host-passthrough); the features the model hides and the kernel "
				"parameters it adds are not in the definition",
			 o->cpu_model))
		return -1;
	return 0;
}

static char *serialize(xmlDocPtr doc)
{
	xmlBufferPtr buf = xmlBufferCreate();
	xmlSaveCtxtPtr save;
	char *out = NULL;

	if (!buf)
		return NULL;
	save = xmlSaveToBuffer(buf, "UTF-8", XML_SAVE_FORMAT | XML_SAVE_NO_DECL);
	if (save) {
		xmlSaveDoc(save, doc);
		if (xmlSaveClose(save) >= 0)
			out = strdup((const char *)xmlBufferContent(buf));
	}
	xmlBufferFree(buf);
	return out;
}

char *domain_xml_write(const struct run_options *o, const char *name,
		       struct libvirt_notes *notes)
{
	char *kernel = NULL, *initrd = NULL, *out = NULL, num[32], comment[600];
	xmlDocPtr doc = NULL;
	xmlNodePtr root, os, n, dev;

	if (domain_xml_check_name(name) || check_text("--append", o->append ? o->append : ""))
		return NULL;
	kernel = absolute("--kernel", o->kernel);
	if (!kernel)
		return NULL;
	if (o->initrd && !(initrd = absolute("--initrd", o->initrd)))
		goto out;
	if (check_text("--kernel", kernel) || (initrd && check_text("--initrd", initrd)))
		goto out;
	if (notes_for_options(o, notes))
		goto out;

	doc = xmlNewDoc((const xmlChar *)"1.0");
	root = doc ? xmlNewNode(NULL, (const xmlChar *)"domain") : NULL;
	if (!root) {
		et_error("out of memory");
		goto out;
	}
	xmlDocSetRootElement(doc, root);
	/* "--" may not appear in a comment: the kernel path goes in as is
	 * unless it has one. */
	snprintf(comment, sizeof(comment),
		 "\n  Written by earlytrace %s domain-xml: a direct kernel boot of\n  %s\n"
		 "  on %u vCPU%s with COM1 as the console, as earlytrace runs it.\n"
		 "  Define it with: virsh define FILE\n",
		 EARLYTRACE_VERSION, strstr(kernel, "--") ? "the kernel" : kernel,
		 o->nr_cpus > 1 ? o->nr_cpus : 1, o->nr_cpus > 1 ? "s" : "");
	xmlAddPrevSibling(root, xmlNewDocComment(doc, (const xmlChar *)comment));
	set(root, "type", "kvm");
	add(root, "name", name);
	if (o->mem_size % 1024) {
		snprintf(num, sizeof(num), "%" PRIu64, o->mem_size);
		set(add(root, "memory", num), "unit", "b");
	} else {
		snprintf(num, sizeof(num), "%" PRIu64, o->mem_size / 1024);
		set(add(root, "memory", num), "unit", "KiB");
	}
	snprintf(num, sizeof(num), "%u", o->nr_cpus > 1 ? o->nr_cpus : 1);
	set(add(root, "vcpu", num), "placement", "static");
	os = add(root, "os", NULL);
	n = add(os, "type", "hvm");
	set(n, "arch", "x86_64");
	set(n, "machine", "pc");
	add(os, "kernel", kernel);
	if (initrd)
		add(os, "initrd", initrd);
	if (o->append && *o->append)
		add(os, "cmdline", o->append);
	/* ACPI, so a guest can power the machine off as under earlytrace. */
	n = add(root, "features", NULL);
	add(n, "acpi", NULL);
	add(n, "apic", NULL);
	n = add(root, "cpu", NULL);
	set(n, "mode", "host-passthrough");
	set(n, "check", "none");
	set(n, "migratable", "off");
	/* QEMU fails to start where KVM refuses the guest's IA32_ARCH_
	 * CAPABILITIES (MSR 0x10a: AMD hosts, nested KVMs) if the CPU has the
	 * feature; bench/ runs QEMU with -cpu host,-arch-capabilities alike.
	 * The MSR only carries speculation-mitigation hints. */
	n = add(n, "feature", NULL);
	set(n, "policy", "disable");
	set(n, "name", "arch-capabilities");
	set(add(root, "clock", NULL), "offset", "utc");
	/* earlytrace ends the run on a power-off, a reset or a crash. */
	add(root, "on_poweroff", "destroy");
	add(root, "on_reboot", "destroy");
	add(root, "on_crash", "destroy");
	dev = add(root, "devices", NULL);
	n = add(dev, "serial", NULL);
	set(n, "type", "pty");
	set(add(n, "target", NULL), "port", "0");
	n = add(dev, "console", NULL);
	set(n, "type", "pty");
	n = add(n, "target", NULL);
	set(n, "type", "serial");
	set(n, "port", "0");
	set(add(dev, "memballoon", NULL), "model", "none");
	out = serialize(doc);
	if (!out)
		et_error("cannot write the domain definition (out of memory)");
out:
	xmlFreeDoc(doc);
	free(kernel);
	free(initrd);
	return out;
}
