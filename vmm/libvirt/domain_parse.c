/* SPDX-License-Identifier: MIT */
/*
 * Reading a libvirt domain definition (https://libvirt.org/formatdomain.html)
 * with libxml2: what earlytrace takes from it, what it refuses and what it
 * ignores (docs/libvirt.md has the table). Every element of the definition
 * is either used, refused with an error that names it, ignored with a note
 * that names it, or on a documented list of elements that change nothing
 * for earlytrace (host-side tuning, the implicit PS/2 and bus controllers
 * libvirt adds to every x86 domain, ...).
 */
#include "vmm/libvirt/domain.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "vmm/kvm/vm.h"
#include "vmm/mem/guest_mem.h"
#include "vmm/util/error.h"
#include "vmm/util/printable.h"

struct parse {
	struct libvirt_domain *d;
	const char *name; /* for messages */
};

static int dom_error(const struct parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int dom_error(const struct parse *p, const char *fmt, ...)
{
	char msg[400], line[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "domain '%s': %s", p->name, msg);
	/* One line, printable, as the notes: the text comes from the
	 * definition (XML turns a carriage return into a line feed). */
	printable_sanitize(line, strlen(line));
	return et_error("%s", line);
}

#define dom_note(p, fmt, ...) libvirt_note(&(p)->d->notes, "domain '%s': " fmt, (p)->name, __VA_ARGS__)

int libvirt_note(struct libvirt_notes *n, const char *fmt, ...)
{
	char line[600], **v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	v = realloc(n->lines, (n->nr + 1) * sizeof(*v));
	if (!v)
		return et_error("out of memory");
	n->lines = v;
	/* One line each, printable: the text comes from the definition. */
	printable_sanitize(line, strlen(line));
	v[n->nr] = strdup(line);
	if (!v[n->nr])
		return et_error("out of memory");
	n->nr++;
	return 0;
}

void libvirt_notes_free(struct libvirt_notes *n)
{
	for (size_t i = 0; i < n->nr; i++)
		free(n->lines[i]);
	free(n->lines);
	n->lines = NULL;
	n->nr = 0;
}

/* ---- libxml2 helpers ------------------------------------------------ */

static bool is_elem(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !n->ns && !strcmp((const char *)n->name, name);
}

static xmlNode *child(const xmlNode *parent, const char *name)
{
	for (xmlNode *n = parent ? parent->children : NULL; n; n = n->next)
		if (is_elem(n, name))
			return n;
	return NULL;
}

static unsigned count_children(const xmlNode *parent, const char *name)
{
	unsigned nr = 0;

	for (xmlNode *n = parent ? parent->children : NULL; n; n = n->next)
		nr += is_elem(n, name);
	return nr;
}

/* The element's name as written, with its namespace prefix. */
static const char *elem_name(const xmlNode *n, char *buf, size_t len)
{
	if (n->ns && n->ns->prefix)
		snprintf(buf, len, "%s:%s", (const char *)n->ns->prefix, (const char *)n->name);
	else
		snprintf(buf, len, "%s", (const char *)n->name);
	return buf;
}

/* malloc'd copies, NULL when absent (or out of memory: callers check the
 * elements they need, and a missing optional one changes nothing). */
static char *owned_copy(xmlChar *v)
{
	char *s = v ? strdup((const char *)v) : NULL;

	xmlFree(v);
	return s;
}

static char *prop(const xmlNode *n, const char *name)
{
	return owned_copy(n ? xmlGetNoNsProp(n, (const xmlChar *)name) : NULL);
}

static char *content(const xmlNode *n)
{
	return owned_copy(n ? xmlNodeGetContent(n) : NULL);
}

/* Content with surrounding white space removed (numbers, keywords). */
static char *trimmed(const xmlNode *n)
{
	char *s = content(n), *b, *e;

	if (!s)
		return NULL;
	for (b = s; isspace((unsigned char)*b); b++)
		;
	e = b + strlen(b);
	while (e > b && isspace((unsigned char)e[-1]))
		e--;
	memmove(s, b, (size_t)(e - b));
	s[e - b] = '\0';
	return s;
}

static bool prop_is(const xmlNode *n, const char *name, const char *value)
{
	char *v = prop(n, name);
	bool is = v && !strcmp(v, value);

	free(v);
	return is;
}

/* ---- <memory> ------------------------------------------------------- */

/* libvirt's units (virScaleInteger): b/byte/bytes; k, KiB, M, MiB...
 * powers of 1024; KB, MB... powers of 1000; letters in either case. */
static int unit_scale(const char *unit, uint64_t *scale)
{
	static const char prefixes[] = "kmgtpe";
	const char *p;

	if (!unit || !*unit) {
		*scale = 1024; /* <memory>'s default: KiB */
		return 0;
	}
	if (!strcasecmp(unit, "b") || !strcasecmp(unit, "byte") || !strcasecmp(unit, "bytes")) {
		*scale = 1;
		return 0;
	}
	p = strchr(prefixes, tolower((unsigned char)unit[0]));
	if (!p || !unit[0])
		return -1;
	if (!unit[1] || !strcasecmp(unit + 1, "iB")) {
		*scale = 1ull << (10 * (p - prefixes + 1));
		return 0;
	}
	if (!strcasecmp(unit + 1, "B")) {
		*scale = 1;
		for (long i = 0; i <= p - prefixes; i++)
			*scale *= 1000;
		return 0;
	}
	return -1;
}

static int parse_memory(struct parse *p, const xmlNode *mem)
{
	char *unit = prop(mem, "unit"), *text = trimmed(mem), *end;
	unsigned long long value;
	uint64_t scale, bytes;
	int ret = -1;

	if (!text) {
		ret = et_error("out of memory");
		goto out;
	}
	if (unit_scale(unit, &scale)) {
		dom_error(p, "<memory unit='%s'>: unknown unit", unit);
		goto out;
	}
	errno = 0;
	value = strtoull(text, &end, 10);
	if (!isdigit((unsigned char)text[0]) || *end || errno || value > UINT64_MAX / scale) {
		dom_error(p, "<memory> '%s': not a size earlytrace can give a guest", text);
		goto out;
	}
	bytes = (uint64_t)value * scale;
	if (bytes < arch_guest_ram_layout()->min_size) {
		dom_error(p, "<memory> %s %s: earlytrace needs at least %llu MiB", text,
			  unit ? unit : "KiB", (unsigned long long)(arch_guest_ram_layout()->min_size >> 20));
		goto out;
	}
	if (bytes & 0xfff) {
		if (bytes > UINT64_MAX - 0xfff) {
			dom_error(p, "<memory> '%s': too large", text);
			goto out;
		}
		bytes = (bytes + 0xfff) & ~0xfffull;
		if (dom_note(p, "<memory> %s %s: rounded up to %llu KiB, a whole number of pages",
			     text, unit ? unit : "KiB", (unsigned long long)(bytes >> 10)))
			goto out;
	}
	p->d->mem_size = bytes;
	ret = 0;
out:
	free(unit);
	free(text);
	return ret;
}

/* ---- <vcpu> --------------------------------------------------------- */

static int parse_count(const char *text, unsigned *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = text ? strtoul(text, &end, 10) : 0;
	if (!text || !isdigit((unsigned char)text[0]) || *end || errno || n > UINT_MAX)
		return -1;
	*v = (unsigned)n;
	return 0;
}

static int parse_vcpu(struct parse *p, const xmlNode *vcpu)
{
	char *text = trimmed(vcpu), *current = prop(vcpu, "current");
	unsigned max = 1, cur = 0;
	int ret = -1;

	if (parse_count(text, &max) || max == 0) {
		dom_error(p, "<vcpu> '%s': not a number of vCPUs", text ? text : "");
		goto out;
	}
	if (current && (parse_count(current, &cur) || cur == 0 || cur > max)) {
		dom_error(p, "<vcpu current='%s'>: not a number of vCPUs from 1 to %u", current, max);
		goto out;
	}
	p->d->vcpus = current ? cur : max;
	if (p->d->vcpus > VM_MAX_VCPUS) {
		dom_error(p, "<vcpu> %u: earlytrace runs at most %u vCPUs", p->d->vcpus,
			  VM_MAX_VCPUS);
		goto out;
	}
	ret = 0;
	if (max > p->d->vcpus)
		ret = dom_note(p, "<vcpu current='%u'> %u: earlytrace starts %u of them and none can "
				  "be plugged in later", p->d->vcpus, max, p->d->vcpus);
out:
	free(text);
	free(current);
	return ret;
}

/* ---- <os> ----------------------------------------------------------- */

/* Path-like contents: NULL when the element is absent or empty. */
static int take_path(const xmlNode *os, const char *name, char **out)
{
	const xmlNode *n = child(os, name);
	char *s, *t;

	*out = NULL;
	if (!n)
		return 0;
	t = trimmed(n);
	s = content(n);
	if (!s || !t) {
		free(s);
		free(t);
		return et_error("out of memory");
	}
	if (!*t) {
		free(s);
		s = NULL;
	}
	free(t);
	*out = s;
	return 0;
}

static int parse_os(struct parse *p, const xmlNode *os)
{
	const xmlNode *type = child(os, "type");
	char *text, *arch, *firmware, buf[64];
	bool hvm, x86;
	int ret = 0;

	if (!type)
		return dom_error(p, "no <os><type>: not a definition earlytrace can run");
	text = trimmed(type);
	arch = prop(type, "arch");
	hvm = text && !strcmp(text, "hvm");
	x86 = !arch || !strcmp(arch, "x86_64") || !strcmp(arch, "i686");
	if (!hvm)
		ret = dom_error(p, "<os><type> %s: earlytrace runs hvm guests (a kernel on a "
				   "virtual x86 machine)", text ? text : "");
	else if (!x86)
		ret = dom_error(p, "<os><type arch='%s'>: earlytrace runs x86 guests (x86_64 or "
				   "i686)", arch);
	free(text);
	free(arch);
	if (ret)
		return -1;

	if (take_path(os, "kernel", &p->d->kernel) || take_path(os, "initrd", &p->d->initrd))
		return -1;
	if (child(os, "cmdline")) {
		p->d->cmdline = content(child(os, "cmdline"));
		if (!p->d->cmdline)
			return et_error("out of memory");
	}

	firmware = prop(os, "firmware");
	if (firmware) {
		ret = dom_note(p, "<os firmware='%s'>: ignored, earlytrace runs no firmware and "
				  "enters the kernel directly", firmware);
		free(firmware);
		if (ret)
			return -1;
	}
	for (const xmlNode *n = os->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (is_elem(n, "type") || is_elem(n, "kernel") || is_elem(n, "initrd") ||
		    is_elem(n, "cmdline"))
			continue;
		/* A firmware's boot order; unused with a direct kernel boot, as
		 * by QEMU's -kernel. */
		if (is_elem(n, "boot") || is_elem(n, "bootmenu") || is_elem(n, "bios"))
			continue;
		if (is_elem(n, "loader") || is_elem(n, "nvram"))
			ret = dom_note(p, "<os><%s>: ignored, earlytrace runs no firmware and enters "
					  "the kernel directly", (const char *)n->name);
		else if (is_elem(n, "smbios"))
			ret = dom_note(p, "<os><smbios>: ignored, earlytrace provides no %s",
				       "SMBIOS tables");
		else if (is_elem(n, "acpi"))
			ret = dom_note(p, "<os><acpi>: ignored, earlytrace %s",
				       "loads no ACPI tables from files");
		else
			ret = dom_note(p, "<os><%s>: not understood by earlytrace, ignored",
				       elem_name(n, buf, sizeof(buf)));
		if (ret)
			return -1;
	}
	return 0;
}

/* ---- <features>, <cpu> ---------------------------------------------- */

static int parse_features(struct parse *p, const xmlNode *features)
{
	char list[300] = "", buf[64];
	size_t len = 0;

	for (const xmlNode *n = features->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		/* What earlytrace's machine has anyway: ACPI tables (its own,
		 * docs/linux.md), the local APIC (KVM's in-kernel IRQ chip) and
		 * PAE (the vCPU has it). */
		if (is_elem(n, "acpi") || is_elem(n, "apic") || is_elem(n, "pae"))
			continue;
		if (len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						len ? ", " : "", elem_name(n, buf, sizeof(buf)));
	}
	if (!len)
		return 0;
	return dom_note(p, "<features> %s: ignored, earlytrace's machine does not provide them",
			list);
}

/* <feature policy='disable' name='arch-capabilities'/>, which domain-xml
 * writes so that QEMU starts where KVM refuses MSR 0x10a: the early boot
 * earlytrace traces does not depend on it, so it needs no note. */
static bool arch_capabilities_off(const xmlNode *feature)
{
	char *policy = prop(feature, "policy"), *name = prop(feature, "name");
	bool off = policy && name && !strcmp(policy, "disable") &&
		   !strcmp(name, "arch-capabilities");

	free(policy);
	free(name);
	return off;
}

static int parse_cpu(struct parse *p, const xmlNode *cpu)
{
	char *mode = prop(cpu, "mode"), *model = content(child(cpu, "model"));
	unsigned features = 0;
	unsigned cells = count_children(child(cpu, "numa"), "cell");
	bool passthrough = mode && (!strcmp(mode, "host-passthrough") || !strcmp(mode, "maximum"));
	int ret = 0;

	for (const xmlNode *n = cpu->children; n; n = n->next)
		features += is_elem(n, "feature") && !arch_capabilities_off(n);
	if (!passthrough && (model || (mode && !strcmp(mode, "host-model"))))
		ret = dom_note(p, "<cpu mode='%s'>%s%s: ignored, the guest sees earlytrace's CPU "
				  "model (--cpu, default auto: the host's CPU)",
			       mode ? mode : "custom", model ? " " : "", model ? model : "");
	if (!ret && features)
		ret = dom_note(p, "<cpu><feature> (%u): ignored, the guest sees earlytrace's CPU "
				  "model (--cpu)", features);
	if (!ret && cells > 1)
		ret = dom_note(p, "<cpu><numa> %u cells: ignored, earlytrace's guest has one NUMA "
				  "node", cells);
	free(mode);
	free(model);
	return ret;
}

/* ---- <devices> ------------------------------------------------------ */

struct device_group {
	const char *elem;
	char ids[200];
	unsigned nr;
};

static const char *device_reason(const char *elem)
{
	static const struct {
		const char *elem, *reason;
	} reasons[] = {
		{ "disk", "earlytrace has no storage devices" },
		{ "filesystem", "earlytrace has no storage devices" },
		{ "interface", "earlytrace has no network devices" },
		{ "graphics", "earlytrace has no display; the console is COM1" },
		{ "video", "earlytrace has no display; the console is COM1" },
		{ "hostdev", "earlytrace passes no host devices through" },
		{ "sound", "earlytrace has no sound devices" },
		{ "input", "earlytrace has no input devices but the console" },
		{ "serial", "earlytrace has one serial port, COM1" },
		{ "console", "earlytrace's console is COM1" },
		{ "channel", "earlytrace has one serial port, COM1" },
		{ "parallel", "earlytrace has no parallel port" },
	};

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (!strcmp(reasons[i].elem, elem))
			return reasons[i].reason;
	return "earlytrace has no such device";
}

/* A short name for one device in a note: its target, type or model. */
static char *device_id(const xmlNode *n)
{
	char *id = NULL;

	if (is_elem(n, "disk"))
		id = prop(child(n, "target"), "dev");
	else if (is_elem(n, "filesystem"))
		id = prop(child(n, "target"), "dir");
	if (!id)
		id = prop(n, "type");
	if (!id)
		id = prop(n, "model");
	if (!id)
		id = prop(child(n, "model"), "type");
	return id;
}

static int add_to_group(struct device_group *groups, size_t *nr, size_t max, const char *elem,
			const char *id)
{
	struct device_group *g = NULL;
	size_t len;

	for (size_t i = 0; i < *nr && !g; i++)
		if (!strcmp(groups[i].elem, elem))
			g = &groups[i];
	if (!g) {
		if (*nr == max)
			return 0; /* the notes already say plenty */
		g = &groups[(*nr)++];
		g->elem = elem;
		g->ids[0] = '\0';
		g->nr = 0;
	}
	g->nr++;
	len = strlen(g->ids);
	if (id && len < sizeof(g->ids))
		snprintf(g->ids + len, sizeof(g->ids) - len, "%s%s", len ? ", " : "", id);
	return 0;
}

/* Devices every libvirt x86 domain gets whether asked for or not, and
 * ones that change nothing for earlytrace (docs/libvirt.md). */
static bool device_is_silent(const xmlNode *n)
{
	return is_elem(n, "emulator") || is_elem(n, "controller") || is_elem(n, "memballoon") ||
	       is_elem(n, "audio") || is_elem(n, "panic") ||
	       (is_elem(n, "input") && prop_is(n, "bus", "ps2"));
}

static int parse_devices(struct parse *p, const xmlNode *devices)
{
	struct device_group groups[24];
	size_t nr = 0;
	bool have_com1 = false;

	for (const xmlNode *n = devices->children; n; n = n->next) {
		char *id;

		if (n->type != XML_ELEMENT_NODE || device_is_silent(n))
			continue;
		if (is_elem(n, "serial") && !have_com1) {
			/* The first serial port is COM1, on earlytrace's stdout. */
			char *type = prop(n, "type");
			int ret = 0;

			have_com1 = true;
			if (type && strcmp(type, "pty") && strcmp(type, "stdio") &&
			    strcmp(type, "vc"))
				ret = dom_note(p, "<serial type='%s'>: COM1 goes to earlytrace's "
						  "standard output instead", type);
			free(type);
			if (ret)
				return -1;
			continue;
		}
		if (is_elem(n, "console")) {
			char *target = prop(child(n, "target"), "type");
			bool serial = !target || !strcmp(target, "serial");

			free(target);
			if (serial)
				continue; /* the same port as <serial>, in libvirt's model */
		}
		id = device_id(n);
		add_to_group(groups, &nr, sizeof(groups) / sizeof(groups[0]),
			     (const char *)n->name, id);
		free(id);
	}
	for (size_t i = 0; i < nr; i++) {
		const struct device_group *g = &groups[i];
		char count[24] = "";

		if (g->nr > 1)
			snprintf(count, sizeof(count), " x%u", g->nr);
		if (dom_note(p, "<%s>%s%s%s%s: ignored, %s", g->elem, count, g->ids[0] ? " (" : "",
			     g->ids, g->ids[0] ? ")" : "", device_reason(g->elem)))
			return -1;
	}
	return 0;
}

/* ---- <domain> ------------------------------------------------------- */

static bool top_is_silent(const xmlNode *n)
{
	/* Descriptions, host-side tuning and policies, and what earlytrace
	 * decides itself (it ends the run on a reset, a power-off or a
	 * crash; it has no RTC for <clock> to set). */
	static const char *const silent[] = {
		"name", "uuid", "genid", "title", "description", "metadata", "currentMemory",
		"memoryBacking", "memtune", "blkiotune", "cputune", "numatune", "resource",
		"iothreads", "iothreadids", "defaultiothread", "vcpus", "clock", "on_poweroff",
		"on_reboot", "on_crash", "on_lockfailure", "pm", "seclabel", "perf", "idmap",
		"throttlegroups",
		/* parsed on their own */
		"memory", "vcpu", "os", "features", "cpu", "devices",
	};

	for (size_t i = 0; i < sizeof(silent) / sizeof(silent[0]); i++)
		if (is_elem(n, silent[i]))
			return true;
	return false;
}

static int note_top(struct parse *p, const xmlNode *n)
{
	char buf[64];

	if (is_elem(n, "maxMemory"))
		return dom_note(p, "<maxMemory>: ignored, earlytrace has no %s", "memory hotplug");
	if (is_elem(n, "sysinfo"))
		return dom_note(p, "<sysinfo>: ignored, earlytrace provides no %s", "SMBIOS tables");
	if (is_elem(n, "launchSecurity") || is_elem(n, "keywrap"))
		return dom_note(p, "<%s>: ignored, earlytrace runs the guest unencrypted",
				(const char *)n->name);
	return dom_note(p, "<%s>: not understood by earlytrace, ignored",
			elem_name(n, buf, sizeof(buf)));
}

static int check_type(struct parse *p, const xmlNode *root)
{
	char *type = prop(root, "type");
	int ret = 0;

	if (!type)
		return dom_error(p, "<domain> has no type");
	if (!strcmp(type, "qemu"))
		ret = dom_note(p, "<domain type='%s'> asks for emulation: earlytrace always runs "
				  "the guest with KVM", type);
	else if (strcmp(type, "kvm") && strcmp(type, "test"))
		ret = dom_error(p, "<domain type='%s'>: earlytrace runs KVM guests (type 'kvm' or "
				   "'qemu')", type);
	free(type);
	return ret;
}

static int parse_root(struct parse *p, const xmlNode *root)
{
	const xmlNode *n;

	if (!is_elem(root, "domain"))
		return et_error("not a libvirt domain definition: the root element is <%s>",
				(const char *)root->name);
	p->d->name = trimmed(child(root, "name"));
	if (!p->d->name || !*p->d->name)
		return et_error("libvirt domain definition without a <name>");
	p->name = p->d->name;
	if (check_type(p, root))
		return -1;
	if (!child(root, "os"))
		return dom_error(p, "no <os>: not a definition earlytrace can run");
	if (parse_os(p, child(root, "os")))
		return -1;
	p->d->vcpus = 1;
	if ((n = child(root, "vcpu")) && parse_vcpu(p, n))
		return -1;
	if ((n = child(root, "memory")) && parse_memory(p, n))
		return -1;
	if ((n = child(root, "features")) && parse_features(p, n))
		return -1;
	if ((n = child(root, "cpu")) && parse_cpu(p, n))
		return -1;
	if ((n = child(root, "devices")) && parse_devices(p, n))
		return -1;
	for (n = root->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !top_is_silent(n) && note_top(p, n))
			return -1;
	return 0;
}

int libvirt_domain_parse(struct libvirt_domain *d, const char *xml, size_t len)
{
	struct parse p = { d, "?" };
	xmlParserCtxtPtr ctxt;
	xmlDocPtr doc;
	int ret;

	memset(d, 0, sizeof(*d));
	if (len > INT_MAX)
		return et_error("libvirt domain definition too large (%zu bytes)", len);
	ctxt = xmlNewParserCtxt();
	if (!ctxt)
		return et_error("out of memory");
	doc = xmlCtxtReadMemory(ctxt, xml, (int)len, "domain.xml", NULL,
				XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc || !xmlDocGetRootElement(doc)) {
		const xmlError *e = xmlCtxtGetLastError(ctxt);
		char msg[200] = "no root element";

		if (e && e->message) {
			snprintf(msg, sizeof(msg), "%s", e->message);
			msg[strcspn(msg, "\n")] = '\0';
		}
		et_error("libvirt domain definition is not well-formed XML: line %d: %s",
			 e ? e->line : 0, msg);
		xmlFreeDoc(doc);
		xmlFreeParserCtxt(ctxt);
		return -1;
	}
	ret = parse_root(&p, xmlDocGetRootElement(doc));
	xmlFreeDoc(doc);
	xmlFreeParserCtxt(ctxt);
	if (ret)
		libvirt_domain_free(d);
	return ret;
}

void libvirt_domain_free(struct libvirt_domain *d)
{
	free(d->name);
	free(d->uri);
	free(d->kernel);
	free(d->initrd);
	free(d->cmdline);
	libvirt_notes_free(&d->notes);
	memset(d, 0, sizeof(*d));
}
