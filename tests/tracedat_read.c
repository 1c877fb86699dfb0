/* SPDX-License-Identifier: MIT */
/* Reading a trace.dat with libtracecmd (tracedat_read.h). */
#include "tests/tracedat_read.h"

#include <string.h>

#include <trace-cmd.h>

struct read_state {
	struct tep_handle *tep;
	dat_record_fn fn;
	void *ctx;
};

static int is_address_field(const char *name)
{
	return !strcmp(name, "ip") || !strcmp(name, "parent_ip") || !strcmp(name, "func") ||
	       !strcmp(name, "rip");
}

static int read_one(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *data)
{
	struct read_state *st = data;
	struct tep_event *ev = tep_find_event_by_record(st->tep, rec);
	struct dat_record r;
	unsigned long long v;

	(void)h;
	memset(&r, 0, sizeof(r));
	r.cpu = cpu;
	r.ts = rec->ts;
	r.type = tep_data_type(st->tep, rec);
	if (!ev) {
		st->fn(st->ctx, &r);
		return 0;
	}
	r.system = ev->system;
	r.name = ev->name;
	if (!tep_get_common_field_val(NULL, ev, "common_flags", rec, &v, 0))
		r.flags = v;
	for (struct tep_format_field *f = ev->format.fields; f && r.nr_fields < DAT_MAX_FIELDS;
	     f = f->next) {
		struct dat_field *out = &r.fields[r.nr_fields];

		out->name = f->name;
		if (f->flags & (TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_STRING)) {
			int len = 0;
			const char *p = tep_get_field_raw(NULL, ev, f->name, rec, &len, 0);

			out->is_string = 1;
			out->str = p ? p : "";
			out->len = p ? strnlen(p, (size_t)len) : 0;
		} else if (!tep_get_field_val(NULL, ev, f->name, rec, &v, 0)) {
			out->value = v;
			if (is_address_field(f->name))
				out->function = tep_find_function(st->tep, v);
		} else {
			continue;
		}
		r.nr_fields++;
	}
	st->fn(st->ctx, &r);
	return 0;
}

int dat_read(const char *path, int *cpus, dat_record_fn fn, void *ctx)
{
	struct tracecmd_input *h = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	struct read_state st;
	int ret;

	if (!h)
		return -1;
	st.tep = tracecmd_get_tep(h);
	st.fn = fn;
	st.ctx = ctx;
	*cpus = tep_get_cpus(st.tep);
	ret = tracecmd_iterate_events(h, NULL, 0, read_one, &st) < 0 ? -1 : 0;
	tracecmd_close(h);
	return ret;
}
