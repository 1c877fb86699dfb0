/* SPDX-License-Identifier: MIT */
#include "cmdline.h"

#include "print.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

struct word {
	const char *s;
	size_t len;
};

static bool word_is(struct word w, const char *lit)
{
	size_t i;

	for (i = 0; i < w.len; i++) {
		if (lit[i] != w.s[i])
			return false;
	}
	return lit[i] == '\0';
}

/* If w is "<key>=<value>", returns true and the value part. */
static bool word_value(struct word w, const char *key, struct word *value)
{
	size_t i;

	for (i = 0; key[i]; i++) {
		if (i >= w.len || w.s[i] != key[i])
			return false;
	}
	if (i >= w.len || w.s[i] != '=')
		return false;
	value->s = w.s + i + 1;
	value->len = w.len - i - 1;
	return true;
}

static bool parse_u32(struct word w, uint32_t *out)
{
	uint32_t v = 0;

	if (w.len == 0)
		return false;
	for (size_t i = 0; i < w.len; i++) {
		uint32_t d = (uint32_t)(w.s[i] - '0');

		if (w.s[i] < '0' || w.s[i] > '9' || v > (0xffffffffu - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static void bad_word(struct word w)
{
	print_str("cmdline: bad value in ");
	print_strn(w.s, w.len);
	print_str("\n");
}

static void apply_word(struct word w, struct boot_opts *opts)
{
	struct word v;

	if (word_value(w, "exit", &v)) {
		if (!parse_u32(v, &opts->exit_status))
			bad_word(w);
	} else if (word_value(w, "crash", &v)) {
		if (word_is(v, "triple"))
			opts->crash = CRASH_TRIPLE;
		else if (word_is(v, "hlt"))
			opts->crash = CRASH_HLT;
		else if (word_is(v, "panic"))
			opts->crash = CRASH_PANIC;
		else if (word_is(v, "panic-hang"))
			opts->crash = CRASH_PANIC_HANG;
		else if (word_is(v, "hang-loop"))
			opts->crash = CRASH_HANG_LOOP;
		else if (word_is(v, "internal"))
			opts->crash = CRASH_INTERNAL;
		else
			bad_word(w);
	} else if (word_value(w, "reboot", &v)) {
		/* The older name of reset=kbd. */
		if (word_is(v, "kbd"))
			opts->reset = RESET_KBD;
		else
			bad_word(w);
	} else if (word_value(w, "reset", &v)) {
		if (word_is(v, "kbd"))
			opts->reset = RESET_KBD;
		else if (word_is(v, "bios"))
			opts->reset = RESET_BIOS;
		else if (word_is(v, "acpi"))
			opts->reset = RESET_ACPI;
		else if (word_is(v, "cf9"))
			opts->reset = RESET_CF9;
		else if (word_is(v, "triple"))
			opts->reset = RESET_TRIPLE;
		else
			bad_word(w);
	} else if (word_value(w, "trace", &v)) {
		if (word_is(v, "ring"))
			opts->trace_ring = true;
		else
			bad_word(w);
	} else if (word_value(w, "end", &v)) {
		if (word_is(v, "spin"))
			opts->end_spin = true;
		else
			bad_word(w);
	} else if (word_value(w, "repeat", &v)) {
		if (!parse_u32(v, &opts->repeat) || opts->repeat == 0)
			bad_word(w);
	} else if (word_is(w, "regcheck")) {
		opts->regcheck = true;
	} else if (word_is(w, "smp")) {
		opts->smp = true;
	} else if (word_value(w, "smp", &v)) {
		if (word_is(v, "crash"))
			opts->smp = opts->smp_crash = true;
		else if (word_is(v, "ring"))
			opts->smp = opts->smp_ring = true;
		else if (word_is(v, "race"))
			opts->smp = opts->smp_race = true;
		else if (word_is(v, "busy"))
			opts->smp = opts->smp_busy = true;
		else if (word_is(v, "only"))
			opts->smp = opts->smp_only = true;
		else
			bad_word(w);
	} else if (word_value(w, "exits", &v)) {
		if (word_is(v, "sequence"))
			opts->exit_sequence = true;
		else
			bad_word(w);
	} else if (word_value(w, "hostile", &v)) {
		/* The case name, for common/hostile.c to look up. */
		if (v.len == 0 || v.len >= sizeof(opts->hostile))
			bad_word(w);
		else
			for (size_t i = 0; i < v.len; i++)
				opts->hostile[i] = v.s[i];
	} else if (word_value(w, "nest", &v)) {
		/* The case name, for common/nest.c to look up. */
		if (v.len == 0 || v.len >= sizeof(opts->nest))
			bad_word(w);
		else
			for (size_t i = 0; i < v.len; i++)
				opts->nest[i] = v.s[i];
	}
}

void cmdline_parse(const char *s, size_t max, struct boot_opts *opts)
{
	size_t i = 0;

	*opts = (struct boot_opts){ .exit_status = 0, .crash = CRASH_NONE, .repeat = 1 };
	while (i < max && s[i]) {
		struct word w;

		if (is_space(s[i])) {
			i++;
			continue;
		}
		w.s = s + i;
		while (i < max && s[i] && !is_space(s[i]))
			i++;
		w.len = (size_t)(s + i - w.s);
		apply_word(w, opts);
	}
}
