/* SPDX-License-Identifier: MIT */
#include "vmm/trace/flight_recorder.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/kvm/arch.h"
#include "vmm/trace/event_text.h"
#include "vmm/util/error.h"

/* Events kept for the parent-link search, whatever --tail prints. */
#define FR_SEARCH_EVENTS 4096
#define FR_MAX_FRAMES 32

int flight_recorder_init(struct flight_recorder *fr, size_t tail, struct machine *m,
			 const struct graph *graph, uint64_t tsc_khz)
{
	memset(fr, 0, sizeof(*fr));
	fr->m = m;
	fr->graph = graph;
	fr->tsc_khz = tsc_khz;
	fr->print = tail;
	fr->tail_cap = tail > FR_SEARCH_EVENTS ? tail : FR_SEARCH_EVENTS;
	fr->guest_cap = fr->tail_cap;
	fr->calls_cap = 1024;
	fr->tail = calloc(fr->tail_cap, sizeof(*fr->tail));
	fr->guest = calloc(fr->guest_cap, sizeof(*fr->guest));
	fr->calls = calloc(fr->calls_cap, sizeof(*fr->calls));
	fr->nr_cpus = m && m->nr_cpus ? m->nr_cpus : 1;
	fr->cpu_events = calloc(fr->nr_cpus, sizeof(*fr->cpu_events));
	fr->batches = calloc(fr->nr_cpus, sizeof(*fr->batches));
	if (!fr->tail || !fr->guest || !fr->calls || !fr->cpu_events || !fr->batches) {
		flight_recorder_free(fr);
		return et_error("out of memory");
	}
	return 0;
}

void flight_recorder_free(struct flight_recorder *fr)
{
	flight_recorder_stop(fr);
	free(fr->tail);
	free(fr->guest);
	free(fr->calls);
	free(fr->cpu_events);
	free(fr->batches);
	hang_watch_free(&fr->hang);
	fr->tail = fr->guest = NULL;
	fr->calls = NULL;
	fr->cpu_events = NULL;
	fr->batches = NULL;
}

/* ---- per-function newest call: open addressing on the entry ip ---- */

static struct fr_last_call *call_slot(struct fr_last_call *tab, size_t cap, uint64_t ip)
{
	size_t i = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);

	while (tab[i].ip && tab[i].ip != ip)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static void grow_calls(struct flight_recorder *fr)
{
	size_t cap = fr->calls_cap * 2;
	struct fr_last_call *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return; /* keep the old table: the stack is a best effort */
	for (size_t i = 0; i < fr->calls_cap; i++)
		if (fr->calls[i].ip)
			*call_slot(tab, cap, fr->calls[i].ip) = fr->calls[i];
	free(fr->calls);
	fr->calls = tab;
	fr->calls_cap = cap;
}

static void note_call(struct flight_recorder *fr, const struct et_ring_record *ev)
{
	struct fr_last_call *c;

	if (et_rec_kind(ev) != ET_REC_CALL || !ev->ip)
		return;
	if (fr->calls_nr * 10 >= fr->calls_cap * 7)
		grow_calls(fr);
	c = call_slot(fr->calls, fr->calls_cap, ev->ip);
	if (!c->ip) {
		if (fr->calls_nr * 10 >= fr->calls_cap * 9)
			return; /* growing failed and the table is full */
		fr->calls_nr++;
	} else if (c->tsc > ev->tsc) {
		return; /* a guest-ring call older than the one we have */
	}
	*c = (struct fr_last_call){ ev->ip, ev->parent_ip, ev->tsc };
}

void flight_recorder_add(void *ctx, const struct et_ring_record *ev)
{
	struct flight_recorder *fr = ctx;
	uint64_t seq = atomic_load_explicit(&fr->seen, memory_order_relaxed);

	if (!fr->tail)
		return;
	fr->tail[seq % fr->tail_cap] = *ev;
	note_call(fr, ev);
	/* The watchdog's per-vCPU progress (the recording path runs one
	 * exit at a time, the watchdog only reads). */
	if (et_rec_cpu(ev) < fr->nr_cpus)
		atomic_fetch_add_explicit(&fr->cpu_events[et_rec_cpu(ev)], 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&fr->other_events, 1, memory_order_relaxed);
	atomic_store_explicit(&fr->seen, seq + 1, memory_order_relaxed);
}

void flight_recorder_add_guest(struct flight_recorder *fr, const struct et_ring_record *ev)
{
	if (!fr->guest)
		return;
	fr->guest[fr->guest_seen % fr->guest_cap] = *ev;
	note_call(fr, ev);
	fr->guest_seen++;
}

/* ---- the report ------------------------------------------------------ */

/* "name+0xoff", "name" at its start, "0x..." without a symbol. */
static const char *sym(struct flight_recorder *fr, uint64_t addr, char *buf, size_t len)
{
	uint64_t off;
	const struct symbol *s = symtab_lookup(&fr->m->symbols.tab, addr, &off);

	if (!s)
		snprintf(buf, len, "0x%" PRIx64, addr);
	else if (!off)
		snprintf(buf, len, "%s", s->name);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, s->name, off);
	return buf;
}

/* "12.345 us" between two TSCs (cycles when the frequency is unknown). */
static const char *ago(struct flight_recorder *fr, uint64_t then, uint64_t now, char *buf,
		       size_t len)
{
	uint64_t d = now > then ? now - then : 0;

	if (!fr->tsc_khz)
		snprintf(buf, len, "%" PRIu64 " cycles", d);
	else {
		uint64_t ns = (uint64_t)((unsigned __int128)d * 1000000u / fr->tsc_khz);

		snprintf(buf, len, "%" PRIu64 ".%03" PRIu64 " us", ns / 1000, ns % 1000);
	}
	return buf;
}

static int by_tsc(const void *a, const void *b)
{
	const struct et_ring_record *x = a, *y = b;

	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

/* The newest events of both sources, oldest first; *n of them. */
static struct et_ring_record *newest_events(struct flight_recorder *fr, size_t *n)
{
	uint64_t seen = atomic_load(&fr->seen);
	size_t nv = seen < fr->tail_cap ? (size_t)seen : fr->tail_cap;
	size_t ng = fr->guest_seen < fr->guest_cap ? (size_t)fr->guest_seen : fr->guest_cap;
	struct et_ring_record *all = malloc((nv + ng + 1) * sizeof(*all));

	*n = 0;
	if (!all)
		return NULL;
	for (size_t i = 0; i < nv; i++)
		all[(*n)++] = fr->tail[(seen - nv + i) % fr->tail_cap];
	for (size_t i = 0; i < ng; i++)
		all[(*n)++] = fr->guest[(fr->guest_seen - ng + i) % fr->guest_cap];
	/* Guest-ring events interleave in time with the VMM's later exits;
	 * the VMM's own are in order already (qsort is not stable, but equal
	 * TSCs only happen between sources). */
	if (ng)
		qsort(all, *n, sizeof(*all), by_tsc);
	return all;
}

static void print_event(struct flight_recorder *fr, const struct et_ring_record *e,
			uint64_t last_tsc, FILE *out)
{
	char when[48], minus[52], a[192], b[192];

	snprintf(minus, sizeof(minus), "-%s", ago(fr, e->tsc, last_tsc, when, sizeof(when)));
	fprintf(out, "    %15s [%03u] ", minus, et_rec_cpu(e));
	if (et_rec_is_exit(e))
		fprintf(out, "exit   %s in %s\n", event_exit_text(e, a, sizeof(a)),
			sym(fr, e->ip, b, sizeof(b)));
	else if (et_rec_kind(e) == ET_REC_RET)
		fprintf(out, "return %s to %s\n", sym(fr, e->ip, a, sizeof(a)),
			sym(fr, e->parent_ip, b, sizeof(b)));
	else
		fprintf(out, "call   %s <-%s\n", sym(fr, e->ip, a, sizeof(a)),
			e->parent_ip ? sym(fr, e->parent_ip, b, sizeof(b)) : "?");
}

static void print_tail(struct flight_recorder *fr, const struct et_ring_record *all, size_t n,
		       FILE *out)
{
	size_t first = n > fr->print ? n - fr->print : 0;

	if (!n) {
		fprintf(out, "  no events recorded\n");
		return;
	}
	fprintf(out, "  last %zu of %" PRIu64 " events, oldest first (time before the last):\n",
		n - first, atomic_load(&fr->seen) + fr->guest_seen);
	for (size_t i = first; i < n; i++)
		print_event(fr, &all[i], all[n - 1].tsc, out);
}

/* The newest call of the function at entry, before `before` (a TSC). */
static bool newest_call(struct flight_recorder *fr, const struct et_ring_record *all, size_t n,
			uint64_t entry, uint64_t before, struct fr_last_call *c)
{
	const struct fr_last_call *m;

	for (size_t i = n; i-- > 0;)
		if (et_rec_kind(&all[i]) == ET_REC_CALL && all[i].ip == entry && all[i].tsc < before) {
			*c = (struct fr_last_call){ all[i].ip, all[i].parent_ip, all[i].tsc };
			return true;
		}
	m = call_slot(fr->calls, fr->calls_cap, entry);
	if (m->ip == entry && m->tsc < before) {
		*c = *m;
		return true;
	}
	return false;
}

/* The word at the stack pointer: a return address when rip is at a
 * function's first instruction. */
static bool return_address_at_sp(struct flight_recorder *fr, const struct kvm_regs *r,
				 const struct kvm_sregs *s, uint64_t *ret)
{
	return arch_read_stack_top(&fr->m->vm.mem, r, s, ret) == 0;
}

static void stack_from_parent_links(struct flight_recorder *fr, const struct et_ring_record *all,
				    size_t n, const struct kvm_regs *r, const struct kvm_sregs *s,
				    uint64_t now, FILE *out)
{
	uint64_t pc = arch_regs_ip(r), before = UINT64_MAX, off;
	char a[192], b[192], when[48];

	fprintf(out, "  call stack from the trace's parent links (newest call of each function; "
		     "innermost first):\n");
	fprintf(out, "    #0  %-40s rip\n", sym(fr, pc, a, sizeof(a)));
	for (unsigned depth = 1; depth < FR_MAX_FRAMES; depth++) {
		const struct symbol *f = symtab_lookup(&fr->m->symbols.tab, pc, &off);
		struct fr_last_call c;

		if (!f) {
			fprintf(out, "        (no symbol covers 0x%" PRIx64 ": the chain ends)\n", pc);
			return;
		}
		if (!newest_call(fr, all, n, f->addr, before, &c)) {
			uint64_t ret;

			/* At a function's entry its caller's return address is
			 * on top of the stack, traced or not. */
			if (depth == 1 && off == 0 && return_address_at_sp(fr, r, s, &ret) && ret) {
				fprintf(out, "    #%-2u %-40s the return address at rsp (rip is at %s's "
					     "entry)\n",
					depth, sym(fr, ret, a, sizeof(a)), f->name);
				pc = ret;
				continue;
			}
			fprintf(out, "        (no call of %s in the trace: not traced, or before the "
				     "trace began; the chain ends)\n",
				f->name);
			return;
		}
		fprintf(out, "    #%-2u %-40s called %s %s before the end\n", depth,
			sym(fr, c.parent_ip, a, sizeof(a)), sym(fr, c.ip, b, sizeof(b)),
			ago(fr, c.tsc, now, when, sizeof(when)));
		if (!c.parent_ip)
			return;
		pc = c.parent_ip;
		before = c.tsc;
	}
}

static void stack_from_graph(struct flight_recorder *fr, const struct kvm_regs *r, uint64_t now,
			     FILE *out)
{
	const struct graph *g = fr->graph;
	char a[192], b[192], when[48];

	fprintf(out, "  call stack from --graph's return frames (exact; innermost first):\n");
	fprintf(out, "    #0  %-40s rip\n", sym(fr, arch_regs_ip(r), a, sizeof(a)));
	for (size_t i = g->nr; i-- > 0;)
		fprintf(out, "    #%-2zu %-40s called %s %s before the end\n", g->nr - i,
			sym(fr, g->frames[i].ret, a, sizeof(a)), sym(fr, g->frames[i].func, b, sizeof(b)),
			ago(fr, g->frames[i].call_tsc, now, when, sizeof(when)));
	if (!g->nr)
		fprintf(out, "        (no traced function is running)\n");
}

/* After the run (every vCPU thread has ended, so their registers can be
 * read): the other vCPUs' state and registers. */
static void print_other_vcpus(struct flight_recorder *fr, struct vcpu *except, FILE *out)
{
	for (unsigned i = 0; i < fr->m->nr_cpus; i++) {
		struct vcpu *v = machine_vcpu(fr->m, i);

		if (v == except)
			continue;
		fprintf(out, "  vCPU %u: %s\n", v->id, vcpu_state_name(v));
		if (vcpu_has_started(v))
			arch_show_vcpu_state(v, out);
	}
}

/* The vCPU whose end the report is about: the one that crashed, else
 * the boot processor. */
static struct vcpu *subject_vcpu(struct flight_recorder *fr)
{
	for (unsigned i = 0; i < fr->m->nr_cpus; i++)
		if (machine_vcpu(fr->m, i)->crash_reason)
			return machine_vcpu(fr->m, i);
	return &fr->m->vcpu;
}

/* A hang with several vCPUs: which were stuck where, and since when (as
 * the watchdog saw them; every vCPU thread has ended, so their registers
 * can be read). */
static void print_stuck_vcpus(struct flight_recorder *fr, FILE *out)
{
	char where[192];

	fprintf(out, "  no vCPU made progress (a new event, a trampoline record) for %g s:\n",
		fr->hang_timeout_s);
	for (unsigned i = 0; i < fr->m->nr_cpus && i < fr->nr_cpus; i++) {
		struct vcpu *v = machine_vcpu(fr->m, i);
		struct kvm_regs r;
		double quiet = hang_watch_quiet_s(&fr->hang, i, fr->hang_at);

		if (vcpu_get_regs(v, &r, NULL) < 0)
			snprintf(where, sizeof(where), "?");
		else
			sym(fr, arch_regs_ip(&r), where, sizeof(where));
		fprintf(out, "    vCPU %u stuck at %s (%s); %s %.1f s\n", v->id, where,
			vcpu_state_name(v),
			hang_watch_ever_moved(&fr->hang, i) ? "its last progress"
							    : "no progress since the watchdog began,",
			quiet);
	}
}

static void report_on(struct flight_recorder *fr, struct vcpu *vcpu, const char *why,
		      bool registers, bool others, FILE *out)
{
	struct kvm_regs r;
	struct kvm_sregs s;
	struct et_ring_record *all;
	size_t n;
	uint64_t now;

	fprintf(out, "earlytrace: flight recorder: %s\n", why);
	if (fr->m->nr_cpus > 1 && atomic_load(&fr->hung))
		print_stuck_vcpus(fr, out);
	if (fr->m->nr_cpus > 1)
		fprintf(out, "  on vCPU %u\n", vcpu->id);
	if (registers) {
		if (vcpu_is_halted(vcpu))
			fprintf(out, "  the vCPU is halted (HLT), waiting for an interrupt\n");
		arch_show_vcpu_state(vcpu, out);
	}
	all = newest_events(fr, &n);
	print_tail(fr, all, n, out);
	now = n ? all[n - 1].tsc : vcpu_guest_tsc(vcpu);
	if (vcpu_get_regs(vcpu, &r, &s) < 0)
		fprintf(out, "  call stack: registers unavailable\n");
	else if (fr->graph && fr->graph->enabled && !fr->graph->stale)
		stack_from_graph(fr, &r, now, out);
	else
		stack_from_parent_links(fr, all, n, &r, &s, now, out);
	free(all);
	if (others)
		print_other_vcpus(fr, vcpu, out);
	fflush(out);
}

void flight_recorder_report(struct flight_recorder *fr, const char *why, bool registers,
			    FILE *out)
{
	report_on(fr, subject_vcpu(fr), why, registers, fr->m->nr_cpus > 1, out);
}

void flight_recorder_on_panic(struct flight_recorder *fr, struct vcpu *vcpu, char *text,
			      size_t len)
{
	const struct panic_watch *pw = &fr->m->panic;
	char where[192], msg[PANIC_MESSAGE_MAX + 4] = "";

	if (pw->message[0])
		snprintf(msg, sizeof(msg), "\"%s\"; ", pw->message);
	snprintf(text, len, "guest panic: %spanic() called from %s", msg,
		 pw->caller ? sym(fr, pw->caller, where, sizeof(where)) : "?");
	/* During the run: the other vCPUs are running, their registers are
	 * theirs to read; the panicking one is ours. */
	report_on(fr, vcpu, text, true, false, stderr);
	snprintf(fr->end, sizeof(fr->end), "%s", text);
}

/* "; then <how the run ended>" after a panic's text, or that alone. */
static void end_with(struct flight_recorder *fr, const char *how)
{
	size_t len = strlen(fr->end);

	if (len)
		snprintf(fr->end + len, sizeof(fr->end) - len, "; then %s", how);
	else
		snprintf(fr->end, sizeof(fr->end), "%s", how);
}

void flight_recorder_finish(struct flight_recorder *fr)
{
	enum run_end reason = vm_stop_reason(&fr->m->vm);
	const char *crash = subject_vcpu(fr)->crash_reason;
	char why[192];

	if (reason == RUN_END_GUEST_CRASH) {
		snprintf(why, sizeof(why), "guest crash: %s", crash ? crash : "?");
		/* The crash report above has the registers already. */
		flight_recorder_report(fr, why, false, stderr);
	} else if (reason == RUN_END_HANG) {
		if (fr->m->nr_cpus > 1)
			snprintf(why, sizeof(why),
				 "hang: no new event for %g s on any of the %u vCPUs (--hang-timeout)",
				 fr->hang_timeout_s, fr->m->nr_cpus);
		else
			snprintf(why, sizeof(why), "hang: no new event for %g s (--hang-timeout)",
				 fr->hang_timeout_s);
		flight_recorder_report(fr, why, true, stderr);
	} else {
		/* A panic was reported when it happened; name the end (which
		 * reset path, which end of the panic). */
		vm_stop_describe(&fr->m->vm, why, sizeof(why));
	}
	end_with(fr, why);
}
