/* SPDX-License-Identifier: MIT */
#include "vmm/check/ktap.h"

#include <stdarg.h>
#include <string.h>

#include "vmm/util/error.h"
#include "vmm/util/printable.h"

/* Writes s with everything a KTAP line cannot hold replaced by '?'; in a
 * description also '#', which would start the directive. */
static void put_safe(FILE *out, const char *s, bool description)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (!printable_ascii(c) || (description && c == '#'))
			c = '?';
		putc(c, out);
	}
}

void ktap_begin(struct ktap *k, FILE *out)
{
	memset(k, 0, sizeof(*k));
	k->out = out;
	k->next = 1;
	fputs("KTAP version 1\n", out);
}

void ktap_plan(struct ktap *k, unsigned n)
{
	k->planned = n;
	fprintf(k->out, "1..%u\n", n);
}

void ktap_diag(struct ktap *k, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fputs("# ", k->out);
	put_safe(k->out, line, false);
	putc('\n', k->out);
}

void ktap_result(struct ktap *k, enum ktap_result result, const char *description,
		 const char *data)
{
	bool ok = result == KTAP_PASS || result == KTAP_SKIP;

	if (data && *data)
		ktap_diag(k, "%s", data);
	fprintf(k->out, "%s %u", ok ? "ok" : "not ok", k->next++);
	if (description && *description) {
		putc(' ', k->out);
		put_safe(k->out, description, true);
	}
	if (result == KTAP_ERROR)
		fputs(" # ERROR", k->out);
	else if (result == KTAP_SKIP)
		fputs(" # SKIP", k->out);
	putc('\n', k->out);
	switch (result) {
	case KTAP_PASS:
		k->pass++;
		break;
	case KTAP_FAIL:
		k->fail++;
		break;
	case KTAP_ERROR:
		k->error++;
		break;
	case KTAP_SKIP:
		k->skip++;
		break;
	}
}

int ktap_end(struct ktap *k)
{
	fprintf(k->out, "# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:%u error:%u\n", k->pass,
		k->fail, k->skip, k->error);
	if (fflush(k->out) || ferror(k->out))
		return et_error_errno("cannot write the KTAP report");
	if (k->next - 1 != k->planned)
		return et_error("KTAP report: %u results for a plan of %u", k->next - 1, k->planned);
	return 0;
}
