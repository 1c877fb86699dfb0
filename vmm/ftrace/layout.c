/* SPDX-License-Identifier: MIT */
#include "vmm/ftrace/layout.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vmm/util/error.h"

/* What a member must be for the reader to use it. */
enum member_kind {
	MK_WORD,  /* read as an integer: 1, 2, 4 or 8 bytes (local_t, u64, int...) */
	MK_PTR,	  /* a pointer */
	MK_PLACE, /* only its offset is used (a list_head, a flexible array) */
};

struct member_spec {
	const char *type_name;
	const char *path; /* NULL: the struct's size goes to size_at */
	enum member_kind kind;
	size_t field_at;  /* offsetof(struct ftrace_layout, ...) of a struct ftrace_field */
	size_t size_at;	  /* offsetof(..., size) when path is NULL */
	bool for_fill;	  /* only the fill needs it: a kernel without it is still read */
};

#define F(type, path, kind, field) \
	{ type, path, kind, offsetof(struct ftrace_layout, field), 0, false }
#define SIZE(type, field) { type, NULL, MK_PLACE, 0, offsetof(struct ftrace_layout, field), false }
#define FILL(type, path, kind, field) \
	{ type, path, kind, offsetof(struct ftrace_layout, fill.field), 0, true }
#define FILL_SIZE(type, field) \
	{ type, NULL, MK_PLACE, 0, offsetof(struct ftrace_layout, fill.field), true }

static const struct member_spec specs[] = {
	F("trace_array", "array_buffer.buffer", MK_PTR, trace_array.buffer),

	F("trace_buffer", "cpus", MK_WORD, trace_buffer.cpus),
	F("trace_buffer", "buffers", MK_PTR, trace_buffer.buffers),

	SIZE("ring_buffer_per_cpu", cpu_buffer.size),
	F("ring_buffer_per_cpu", "cpu", MK_WORD, cpu_buffer.cpu),
	F("ring_buffer_per_cpu", "nr_pages", MK_WORD, cpu_buffer.nr_pages),
	F("ring_buffer_per_cpu", "pages", MK_PTR, cpu_buffer.pages),
	F("ring_buffer_per_cpu", "head_page", MK_PTR, cpu_buffer.head_page),
	F("ring_buffer_per_cpu", "tail_page", MK_PTR, cpu_buffer.tail_page),
	F("ring_buffer_per_cpu", "commit_page", MK_PTR, cpu_buffer.commit_page),
	F("ring_buffer_per_cpu", "reader_page", MK_PTR, cpu_buffer.reader_page),
	F("ring_buffer_per_cpu", "entries", MK_WORD, cpu_buffer.entries),
	F("ring_buffer_per_cpu", "overrun", MK_WORD, cpu_buffer.overrun),
	F("ring_buffer_per_cpu", "commit_overrun", MK_WORD, cpu_buffer.commit_overrun),
	F("ring_buffer_per_cpu", "dropped_events", MK_WORD, cpu_buffer.dropped_events),
	F("ring_buffer_per_cpu", "committing", MK_WORD, cpu_buffer.committing),
	F("ring_buffer_per_cpu", "read", MK_WORD, cpu_buffer.read),

	SIZE("buffer_page", buffer_page.size),
	F("buffer_page", "list", MK_PLACE, buffer_page.list),
	F("buffer_page", "read", MK_WORD, buffer_page.read),
	F("buffer_page", "entries", MK_WORD, buffer_page.entries),
	F("buffer_page", "real_end", MK_WORD, buffer_page.real_end),
	F("buffer_page", "page", MK_PTR, buffer_page.page),

	F("buffer_data_page", "time_stamp", MK_WORD, data_page.time_stamp),
	F("buffer_data_page", "commit", MK_WORD, data_page.commit),
	F("buffer_data_page", "data", MK_PLACE, data_page.data),

	F("list_head", "next", MK_PTR, list_head.next),
	F("list_head", "prev", MK_PTR, list_head.prev),

	SIZE("trace_entry", entry.size),
	F("trace_entry", "type", MK_WORD, entry.type),
	F("trace_entry", "flags", MK_WORD, entry.flags),
	F("trace_entry", "preempt_count", MK_WORD, entry.preempt_count),
	F("trace_entry", "pid", MK_WORD, entry.pid),

	F("ftrace_entry", "ip", MK_WORD, fn.ip),
	F("ftrace_entry", "parent_ip", MK_WORD, fn.parent_ip),

	F("ftrace_graph_ent_entry", "graph_ent.func", MK_WORD, graph_ent.func),
	F("ftrace_graph_ent_entry", "graph_ent.depth", MK_WORD, graph_ent.depth),

	F("ftrace_graph_ret_entry", "ret.func", MK_WORD, graph_ret.func),
	F("ftrace_graph_ret_entry", "ret.depth", MK_WORD, graph_ret.depth),
	F("ftrace_graph_ret_entry", "ret.overrun", MK_WORD, graph_ret.overrun),
	F("ftrace_graph_ret_entry", "ret.calltime", MK_WORD, graph_ret.calltime),
	F("ftrace_graph_ret_entry", "ret.rettime", MK_WORD, graph_ret.rettime),

	F("print_entry", "ip", MK_WORD, print.ip),
	F("print_entry", "buf", MK_PLACE, print.buf),

	F("bprint_entry", "ip", MK_WORD, bprint.ip),
	F("bprint_entry", "fmt", MK_PTR, bprint.fmt),
	F("bprint_entry", "buf", MK_PLACE, bprint.buf),

	F("bputs_entry", "ip", MK_WORD, bputs.ip),
	F("bputs_entry", "str", MK_PTR, bputs.str),

	/* The fill (ring_fill.h). rb_time_t is {local64_t time} on 64-bit
	 * kernels; 32-bit ones split it in three words, which the fill does
	 * not write: no member `time` there. */
	FILL("trace_array", "array_buffer.time_start", MK_WORD, time_start),
	FILL("trace_buffer", "flags", MK_WORD, buffer_flags),
	FILL("buffer_page", "write", MK_WORD, write),
	FILL("ring_buffer_per_cpu", "entries_bytes", MK_WORD, entries_bytes),
	FILL("ring_buffer_per_cpu", "pages_touched", MK_WORD, pages_touched),
	FILL("ring_buffer_per_cpu", "pages_lost", MK_WORD, pages_lost),
	FILL("ring_buffer_per_cpu", "write_stamp.time", MK_WORD, write_stamp),
	FILL("ring_buffer_per_cpu", "before_stamp.time", MK_WORD, before_stamp),
	FILL_SIZE("ftrace_entry", fn_size),
	FILL_SIZE("ftrace_graph_ent_entry", graph_ent_size),
	FILL_SIZE("ftrace_graph_ret_entry", graph_ret_size),
};

struct enum_spec {
	const char *enum_name;
	const char *name;
	size_t at;     /* offsetof(struct ftrace_layout, ...) of an int64_t */
	bool optional; /* missing: -1, and nothing refused */
};

#define TRACE_TYPE_ENUM "trace_type"
#define E(enum_name, name, field, optional) \
	{ enum_name, name, offsetof(struct ftrace_layout, field), optional }
/* Grouped by enum (the fixture tool writes one enum per group). */
static const struct enum_spec enum_specs[] = {
	E(TRACE_TYPE_ENUM, "TRACE_FN", type.fn, false),
	E(TRACE_TYPE_ENUM, "TRACE_GRAPH_ENT", type.graph_ent, false),
	E(TRACE_TYPE_ENUM, "TRACE_GRAPH_RET", type.graph_ret, false),
	E(TRACE_TYPE_ENUM, "TRACE_PRINT", type.print, false),
	E(TRACE_TYPE_ENUM, "TRACE_BPRINT", type.bprint, false),
	E(TRACE_TYPE_ENUM, "TRACE_BPUTS", type.bputs, false),
	/* The fill's entries say "irqs-off state unknown" ('X' in ftrace's
	 * irqs-off column): earlytrace does not record the guest's IF. */
	E("trace_flag_type", "TRACE_FLAG_IRQS_NOSUPPORT", fill.irqs_nosupport, true),
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

const struct ftrace_layout_member *ftrace_layout_members(size_t *count)
{
	static struct ftrace_layout_member members[NR(specs)];

	for (size_t i = 0; i < NR(specs); i++)
		members[i] = (struct ftrace_layout_member){ specs[i].type_name, specs[i].path };
	*count = NR(specs);
	return members;
}

const struct ftrace_layout_enum_value *ftrace_layout_enum_values(size_t *count)
{
	static struct ftrace_layout_enum_value values[NR(enum_specs)];

	for (size_t i = 0; i < NR(enum_specs); i++)
		values[i] = (struct ftrace_layout_enum_value){ enum_specs[i].enum_name,
							       enum_specs[i].name };
	*count = NR(enum_specs);
	return values;
}

/* The type behind typedefs and qualifiers; NULL if id is not valid. */
static const struct btf_type *resolved(const struct btf *btf, uint32_t id, int *out_id)
{
	int rid = btf__resolve_type(btf, id);

	if (rid < 0)
		return NULL;
	if (out_id)
		*out_id = rid;
	return btf__type_by_id(btf, (uint32_t)rid);
}

/* Finds `name` among the members of composite type t, looking inside
 * anonymous struct/union members too (depth-limited by max_hops). */
static int find_member(const struct btf *btf, uint32_t type_id, const char *name,
		       struct ftrace_btf_hop *hops, int max_hops)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const struct btf_member *m;

	if (!t || !btf_is_composite(t) || max_hops < 1)
		return -1;
	m = btf_members(t);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < btf_vlen(t); i++) {
			const char *n = btf__name_by_offset(btf, m[i].name_off);
			int rid, depth;

			hops[0] = (struct ftrace_btf_hop){
				.name = n ? n : "",
				.bit_offset = btf_member_bit_offset(t, i),
				.type_id = m[i].type,
				.parent_id = type_id,
			};
			if (btf_member_bitfield_size(t, i))
				continue; /* never one of ours */
			if (pass == 0) {
				if (n && !strcmp(n, name))
					return 1;
				continue;
			}
			/* Second pass: anonymous struct/union members. */
			if (n && *n)
				continue;
			if (!resolved(btf, m[i].type, &rid))
				continue;
			depth = find_member(btf, (uint32_t)rid, name, hops + 1, max_hops - 1);
			if (depth > 0)
				return depth + 1;
		}
	}
	return -1;
}

int ftrace_btf_member_path(const struct btf *btf, uint32_t type_id, const char *path,
			   struct ftrace_btf_hop *hops, int max_hops)
{
	const struct btf_type *outer = btf__type_by_id(btf, type_id);
	const char *outer_name = outer ? btf__name_by_offset(btf, outer->name_off) : NULL;
	char part[128];
	const char *p = path;
	int n = 0;
	uint32_t cur = type_id;

	while (*p) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		int rid, got;

		if (len == 0 || len >= sizeof(part))
			return et_error("BTF: bad member path '%s'", path);
		memcpy(part, p, len);
		part[len] = '\0';
		got = find_member(btf, cur, part, hops + n, max_hops - n);
		if (got < 0)
			return et_error("BTF: struct %s has no member %s", outer_name ? outer_name : "?",
					path);
		n += got;
		p += len + (dot ? 1 : 0);
		if (!*p)
			break;
		if (!resolved(btf, hops[n - 1].type_id, &rid))
			return et_error("BTF: %s.%s has a bad type", outer_name ? outer_name : "?", path);
		cur = (uint32_t)rid;
	}
	return n;
}

/* A member's offset and size, checked against what the reader needs. */
static int lookup_member(const struct btf *btf, uint32_t type_id, const struct member_spec *s,
			 struct ftrace_field *out)
{
	struct ftrace_btf_hop hops[FTRACE_BTF_MAX_HOPS];
	int n = ftrace_btf_member_path(btf, type_id, s->path, hops, FTRACE_BTF_MAX_HOPS);
	const struct btf_type *leaf;
	uint64_t bits = 0;
	int64_t size;

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		bits += hops[i].bit_offset;
	leaf = resolved(btf, hops[n - 1].type_id, NULL);
	size = btf__resolve_size(btf, hops[n - 1].type_id);
	if (!leaf || size < 0)
		return et_error("BTF: %s.%s has a type of unknown size", s->type_name, s->path);
	if (bits % 8 || bits / 8 > UINT32_MAX || size > UINT32_MAX)
		return et_error("BTF: %s.%s is not at a whole byte", s->type_name, s->path);
	switch (s->kind) {
	case MK_WORD:
		if (size != 1 && size != 2 && size != 4 && size != 8)
			return et_error("BTF: %s.%s is %lld bytes, not an integer", s->type_name,
					s->path, (long long)size);
		break;
	case MK_PTR:
		if (!btf_is_ptr(leaf) || (size != 4 && size != 8))
			return et_error("BTF: %s.%s is not a pointer", s->type_name, s->path);
		break;
	case MK_PLACE:
		break;
	}
	out->offset = (uint32_t)(bits / 8);
	out->size = (uint32_t)size;
	return 0;
}

/* One enum value, by enum and name; 0, or -1 when either is missing. */
static int find_enum_value(const struct btf *btf, const char *enum_name, const char *name,
			   int64_t *value)
{
	int id = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM);
	const struct btf_type *t;

	if (id < 0)
		id = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM64);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, (uint32_t)id);
	for (uint32_t i = 0; i < btf_vlen(t); i++) {
		const char *n;

		if (btf_is_enum(t)) {
			n = btf__name_by_offset(btf, btf_enum(t)[i].name_off);
			*value = btf_enum(t)[i].val;
		} else {
			n = btf__name_by_offset(btf, btf_enum64(t)[i].name_off);
			*value = (int64_t)btf_enum64_value(&btf_enum64(t)[i]);
		}
		if (n && !strcmp(n, name))
			return 0;
	}
	return -1;
}

static int lookup_enums(const struct btf *btf, struct ftrace_layout *L)
{
	for (size_t k = 0; k < NR(enum_specs); k++) {
		const struct enum_spec *e = &enum_specs[k];
		int64_t v = -1;

		if (find_enum_value(btf, e->enum_name, e->name, &v)) {
			if (!e->optional && btf__find_by_name_kind(btf, e->enum_name, BTF_KIND_ENUM) < 0 &&
			    btf__find_by_name_kind(btf, e->enum_name, BTF_KIND_ENUM64) < 0)
				return et_error("BTF: no enum %s", e->enum_name);
			if (!e->optional)
				return et_error("BTF: enum %s has no %s", e->enum_name, e->name);
			v = -1;
		}
		memcpy((char *)L + e->at, &v, sizeof(v));
	}
	return 0;
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	(void)fmt;
	(void)args;
	return 0;
}

/* One spec into L; 0, or -1 with an error. */
static int lookup_spec(const struct btf *btf, const struct member_spec *s, struct ftrace_layout *L)
{
	int id = btf__find_by_name_kind(btf, s->type_name, BTF_KIND_STRUCT);
	const struct btf_type *t;

	if (id < 0)
		return et_error("BTF: no struct %s", s->type_name);
	t = btf__type_by_id(btf, (uint32_t)id);
	if (!s->path) {
		memcpy((char *)L + s->size_at, &t->size, sizeof(uint32_t));
		return 0;
	}
	return lookup_member(btf, (uint32_t)id, s, (struct ftrace_field *)((char *)L + s->field_at));
}

static int fill_layout(struct ftrace_layout *L, const struct btf *btf)
{
	memset(L, 0, sizeof(*L));
	L->btf_types = btf__type_cnt(btf);
	for (size_t i = 0; i < NR(specs); i++) {
		if (!lookup_spec(btf, &specs[i], L))
			continue;
		if (!specs[i].for_fill)
			return -1;
		/* The reader goes on without it; the fill is refused, saying why. */
		if (!L->fill_missing[0])
			snprintf(L->fill_missing, sizeof(L->fill_missing), "%s", et_last_error());
	}
	if (!L->fill_missing[0] && L->fill.write_stamp.size != 8)
		snprintf(L->fill_missing, sizeof(L->fill_missing),
			 "BTF: ring_buffer_per_cpu.write_stamp.time is %u bytes, not a 64-bit clock",
			 L->fill.write_stamp.size);
	return lookup_enums(btf, L);
}

int ftrace_layout_from_btf(struct ftrace_layout *L, const void *data, size_t size)
{
	/* libbpf reports parse problems on stderr; ours is the one-line error. */
	libbpf_print_fn_t old = libbpf_set_print(quiet_libbpf);
	struct btf *btf;
	int ret;

	memset(L, 0, sizeof(*L));
	if (size > UINT32_MAX) {
		libbpf_set_print(old);
		return et_error("BTF: %zu bytes is too large", size);
	}
	btf = btf__new(data, (uint32_t)size);
	libbpf_set_print(old);
	if (!btf)
		return et_error("BTF: cannot parse %zu bytes: %s", size, strerror(errno));
	ret = fill_layout(L, btf);
	btf__free(btf);
	return ret;
}

int ftrace_layout_from_image(struct ftrace_layout *L, const struct kernel_image *img)
{
	const uint8_t *bytes;
	size_t size;

	memset(L, 0, sizeof(*L));
	if (kernel_image_section_bytes(img, ".BTF", &bytes, &size))
		return et_error("%s has no .BTF section (a kernel built without "
				"CONFIG_DEBUG_INFO_BTF): the ring buffer's layout is unknown",
				img->name ? img->name : "the kernel");
	if (ftrace_layout_from_btf(L, bytes, size))
		return et_error_prefix("%s", img->name ? img->name : "kernel");
	return 0;
}
