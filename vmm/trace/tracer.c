/* SPDX-License-Identifier: MIT */
#include "vmm/trace/tracer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/kvm/kvm_traits.h"
#include "vmm/trace/progress.h"
#include "vmm/util/error.h"

static void stop_run(struct tracer *t)
{
	vm_request_stop(&t->m->vm, RUN_END_TRACE_DONE);
}

/* The return address the traced call pushed: at a site the function has
 * not touched its stack yet, so it is the word at the stack pointer. */
static uint64_t parent_ip(struct tracer *t, const struct kvm_regs *regs,
			  const struct kvm_sregs *sregs)
{
	uint64_t value;

	return arch_read_stack_top(&t->m->vm.mem, regs, sregs, &value) ? 0 : value;
}

/* Records one call at `site` from the vCPU's current state. */
static void record_call(struct tracer *t, struct vcpu *vcpu, struct patched_site *site,
			const struct kvm_regs *regs, const struct kvm_sregs *sregs,
			const struct arch_paging *pg)
{
	struct et_ring_record ev = {
		.tsc = recorder_now(&t->rec),
		.ip = site->vaddr,
		.parent_ip = parent_ip(t, regs, sregs),
		.cpu = vcpu->id,
		.kind = ET_REC_CALL,
		.flags = ET_REC_SRC_BREAKPOINT,
	};

	/* --graph: the return comes back through our breakpoint. */
	if (t->graph.enabled && graph_on_call(&t->graph, vcpu->id, site->vaddr, regs, sregs, pg, ev.tsc))
		ev.flags |= ET_REC_F_RET_TRACED;
	site->hits++;
	t->bp_events++;
	recorder_record(&t->rec, &ev);
	if (t->o->oneshot)
		site_patches_disarm(&t->patches, site, &t->m->vm.mem);
}

/* The armed site under the vCPU's rip, or NULL. */
static struct patched_site *site_at_rip(struct tracer *t, const struct kvm_regs *regs,
					const struct kvm_sregs *sregs, const struct arch_paging *pg)
{
	struct patched_site *site;
	uint64_t paddr;

	if (arch_translate(&t->m->vm.mem, pg, arch_code_address(sregs, regs), &paddr,
			  NULL))
		return NULL;
	site = site_patches_find(&t->patches, paddr);
	return site && site->armed ? site : NULL;
}

/* An int3 exit: ours if it sits on an armed site. Record the call and
 * resume after the site, which is a nop, or a call to __fentry__ that
 * only returns this early (checked: see check_call_sites()). */
static bool on_int3(void *ctx, struct vcpu *vcpu, struct kvm_regs *regs,
		    const struct kvm_sregs *sregs)
{
	struct tracer *t = ctx;
	struct arch_paging pg = arch_paging_of(sregs);
	struct patched_site *site;

	if (!t->capturing)
		return false;
	site = site_at_rip(t, regs, sregs, &pg);
	/* A return's exit is timed as a call's is (before the return moves
	 * the registers); a guest's own int3 timed so costs the same. */
	if (((site && site->kind == PATCH_INT3) || (!site && t->graph.enabled)) &&
	    !exit_cost_time_again(&t->cost, vcpu, regs, t->bp_charge.exits))
		return true;
	if (!site && t->graph.enabled && graph_on_return(&t->graph, vcpu, regs, sregs, &pg)) {
		vcpu->charge = &t->bp_charge;
		if (vcpu_set_regs(vcpu, regs) < 0)
			vm_request_stop(&t->m->vm, RUN_END_VMM_ERROR);
		return true;
	}
	if (!site || site->kind != PATCH_INT3)
		return false;
	record_call(t, vcpu, site, regs, sregs, &pg);
	vcpu->charge = &t->bp_charge;
	arch_regs_set_ip(regs, arch_regs_ip(regs) + ARCH_SITE_LEN);
	if (vcpu_set_regs(vcpu, regs) < 0)
		vm_request_stop(&t->m->vm, RUN_END_VMM_ERROR);
	return true;
}

/* --until's hardware breakpoint fires before the function's first
 * instruction, so before its int3 or trampoline call: record that call
 * here when it is traced (after the calls still in the trampoline batch),
 * then end the run. */
static void on_until(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct tracer *t = ctx;
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	(void)slot;
	if (t->capturing)
		tramp_mode_drain(&t->tramp);
	if (t->capturing && vcpu_get_regs(vcpu, &regs, &sregs) == 0) {
		struct arch_paging pg = arch_paging_of(&sregs);
		struct patched_site *site = site_at_rip(t, &regs, &sregs, &pg);

		if (site)
			record_call(t, vcpu, site, &regs, &sregs, &pg);
	}
	stop_run(t);
}

/* The hang watchdog sees each vCPU's trampoline records as they are made
 * (they need no exit); on=false: the batches are going away. */
static void watch_batches(struct tracer *t, bool on)
{
	for (unsigned i = 0; i < t->m->nr_cpus; i++)
		flight_recorder_watch_batch(&t->fr, i, on ? tramp_mode_progress(&t->tramp, i) : NULL);
}

size_t tracer_stop_capture(struct tracer *t, const char *how)
{
	if (!t->capturing)
		return t->patches.nr;
	/* Every batch: the run is over, or the kernel's tracer takes over
	 * (Linux's ftrace_init runs before its other CPUs start). */
	tramp_mode_drain_all(&t->tramp);
	t->capturing = false;
	t->handoff_how = how;
	graph_detach(&t->graph, how != NULL);
	site_patches_disarm_all(&t->patches, &t->m->vm.mem);
	watch_batches(t, false);
	tramp_mode_detach(&t->tramp);
	guest_debug_set_int3(&t->m->vcpu, NULL, NULL);
	return t->patches.nr;
}

size_t tracer_resume_capture(struct tracer *t)
{
	size_t armed;

	if (t->capturing)
		return t->patches.armed;
	/* Oneshot slots are not rewritten: those sites take an int3. */
	if (!tramp_mode_reattach(&t->tramp))
		for (size_t i = 0; i < t->patches.nr; i++)
			if (t->patches.sites[i].kind == PATCH_CALL)
				site_patch_set_int3(&t->patches.sites[i]);
	if (graph_reattach(&t->graph) || guest_debug_set_int3(&t->m->vcpu, on_int3, t)) {
		et_warn("--follow: capture cannot resume: %s", et_last_error());
		return 0;
	}
	armed = site_patches_rearm(&t->patches, &t->m->vm.mem, t->o->oneshot);
	watch_batches(t, true);
	t->capturing = true;
	t->handoff_how = NULL;
	return armed;
}

static size_t stop_capture(void *ctx, const char *how)
{
	return tracer_stop_capture(ctx, how);
}

static size_t resume_capture(void *ctx)
{
	return tracer_resume_capture(ctx);
}

/* The kernel's own tracer took over: its ring is read from now on, every
 * --follow-period and at the end. */
static void follow_start(void *ctx)
{
	struct tracer *t = ctx;

	if (kernel_ring_start(&t->kring)) {
		et_warn("%s", et_last_error());
		recorder_mark_now(&t->rec, et_last_error());
		return;
	}
	if (!t->o->no_fill)
		kernel_ring_fill(&t->kring, &t->rec.buf, t->o->graph);
}

/* Every --follow-period, with the vCPU stopped: what the guest's rings
 * hold since the last read goes into the trace file, so a run killed
 * later keeps it. */
static void read_rings(void *ctx, struct vcpu *vcpu)
{
	struct tracer *t = ctx;

	(void)vcpu;
	kernel_ring_read(&t->kring, false);
	handoff_read_guest_ring(&t->handoff, false);
}

/* A guestlib ring was handed over: read it periodically from now on (a
 * --follow run reads already). */
static void guest_ring_start(void *ctx)
{
	struct tracer *t = ctx;

	if (!t->o->follow && machine_every(t->m, t->o->follow_period_s, read_rings, t)) {
		et_warn("%s; the guest ring is read at the end only", et_last_error());
		recorder_mark_now(&t->rec, et_last_error());
	}
}

static const struct handoff_ops handoff_ops = {
	.stop_capture = stop_capture,
	.resume_capture = resume_capture,
	.follow_start = follow_start,
	.guest_ring_start = guest_ring_start,
};

/* The guest entered panic(): the calls still in the trampoline batch came
 * before it; then the flight recorder reports and the trace marks it. */
static void on_guest_panic(void *ctx, struct vcpu *vcpu)
{
	struct tracer *t = ctx;
	char text[256];

	if (t->capturing)
		tramp_mode_drain(&t->tramp);
	/* What the kernel's ring holds now, before its own panic notifiers
	 * (ftrace_dump_on_oops) consume it. */
	kernel_ring_read(&t->kring, false);
	flight_recorder_on_panic(&t->fr, vcpu, text, sizeof(text));
	recorder_mark_now(&t->rec, text);
}

/* Something the VMM did to the guest (--nmi-at's NMI): a mark in the
 * timeline, after the calls the trampolines recorded before it. */
static void on_machine_note(void *ctx, struct vcpu *vcpu, const char *text)
{
	struct tracer *t = ctx;

	(void)vcpu;
	if (t->capturing)
		tramp_mode_drain(&t->tramp);
	recorder_mark_now(&t->rec, text);
}

/* The calls a vCPU recorded without exits that the VMM has not taken
 * yet: in its trampoline batch, then in its guest ring (host_waits.h). */
static size_t guest_call_tscs(void *ctx, unsigned cpu, uint64_t lo, uint64_t hi, uint64_t *out,
			      size_t max)
{
	struct tracer *t = ctx;
	size_t n = tramp_mode_batch_tscs(&t->tramp, cpu, lo, hi, out, max);

	return n + handoff_guest_tscs(&t->handoff, cpu, lo, hi, out + (n < max ? n : max),
				      n < max ? max - n : 0);
}

/* The flight recorder: a panic hook, and a watchdog that also sees the
 * calls trampolines record without an exit. */
static int start_flight_recorder(struct tracer *t)
{
	t->m->panic_hook = on_guest_panic;
	t->m->panic_hook_ctx = t;
	t->m->note_hook = on_machine_note;
	t->m->note_hook_ctx = t;
	watch_batches(t, true);
	return flight_recorder_start(&t->fr, t->o->hang_timeout_s);
}

static const char *symbol_at(void *ctx, uint64_t addr)
{
	uint64_t off;
	const struct symbol *s = symtab_lookup(ctx, addr, &off);

	return s && off == 0 ? s->name : NULL;
}

/* Call sites may only be skipped over while their callee just returns
 * (see arch/x86/fentry_check.h); otherwise they are deselected. */
static void check_call_sites(struct tracer *t)
{
	const struct kernel_image *img = &t->m->kernel;
	size_t calls = 0;
	uint64_t addr;
	const uint8_t *code = NULL;

	for (size_t i = 0; i < t->sites.nr; i++)
		calls += t->sites.sites[i].selected && t->sites.sites[i].kind == SITE_KIND_CALL;
	if (!calls)
		return;
	if (symbols_addr(&t->m->symbols, "__fentry__", &addr) == 0 ||
	    symbols_addr(&t->m->symbols, "mcount", &addr) == 0)
		code = kernel_image_vaddr_bytes(img, addr, 16, NULL, NULL);
	if (code && arch_fentry_only_returns(code, 16, addr, img->elf_class, symbol_at, &t->m->symbols.tab))
		return;
	for (size_t i = 0; i < t->sites.nr; i++)
		if (t->sites.sites[i].kind == SITE_KIND_CALL)
			t->sites.sites[i].selected = false;
	et_warn("%zu call sites left alone: __fentry__ does more than return, so a call cannot "
		"be skipped",
		calls);
}

static int select_sites(struct tracer *t)
{
	const struct trace_options *o = t->o;

	for (size_t i = 0; i < o->nr_filters; i++)
		if (site_filter_add(&t->filter, o->filters[i], false))
			return -1;
	for (size_t i = 0; i < o->nr_notrace; i++)
		if (site_filter_add(&t->filter, o->notrace[i], true))
			return -1;
	if (!t->m->symbols.tab.nr)
		return et_error("%s: no symbols (no .symtab, no kallsyms found); give --symbols",
				t->m->kernel.name);
	if (sites_find(&t->sites, &t->m->kernel, &t->m->symbols) ||
	    site_select(&t->sites, &t->filter, &t->selection))
		return -1;
	check_call_sites(t);
	return site_patches_init(&t->patches, &t->sites, &t->m->kernel);
}

/* What the trace file calls the way calls were seen. */
static const char *mode_name(const struct tracer *t)
{
	size_t calls = 0;

	for (size_t i = 0; i < t->patches.nr; i++)
		calls += t->patches.sites[i].kind == PATCH_CALL;
	if (!calls)
		return "breakpoint";
	return calls == t->patches.nr ? "trampoline" : "trampoline+breakpoint";
}

static int open_output(struct tracer *t)
{
	struct trace_meta meta = {
		.kernel_path = t->m->kernel.name,
		.symbol_source = t->m->symbols.desc,
		.tsc_khz = t->rec.tsc_khz,
		.mode = mode_name(t),
	};

	if (trace_writer_open(&t->rec.out, t->o->output, &meta) ||
	    trace_writer_symbols(t->rec.out, &t->m->symbols.tab))
		return -1;
	return 0;
}

static int attach_handoff(struct tracer *t)
{
	struct machine *m = t->m;
	const struct handoff_config cfg = {
		.vm = &m->vm,
		.vcpu = &m->vcpu,
		.nr_vcpus = m->nr_cpus,
		.syms = &m->symbols,
		.symbol = t->o->handoff,
		.follow = t->o->follow,
		.rec = &t->rec,
		.fr = &t->fr,
		.tramp = &t->tramp.tramp,
		.ops = &handoff_ops,
		.ctx = t,
	};

	if (handoff_attach(&t->handoff, &cfg))
		return -1;
	if (!t->o->follow)
		return 0;
	if (!m->kernel.is_linux)
		return et_error("--follow: %s is not a Linux kernel", m->kernel.name);
	/* While all symbols and the file's bytes (its BTF) are still here. */
	if (kernel_ring_prepare(&t->kring, &m->kernel, &m->symbols, &t->rec, &m->vcpu))
		return -1;
	return machine_every(m, t->o->follow_period_s, read_rings, t);
}

/* Breakpoint mode, and --graph's return breakpoints, are int3s: on a KVM
 * that does not report them (KVM nested under QEMU's TCG) they would go
 * to the guest's own IDT. Auto mode then takes trampolines only
 * (tramp_mode.c) and says so. */
static int check_int3(struct tracer *t)
{
	const struct kvm_traits *k = t->m->vm.traits;

	if (!k || k->int3_exits)
		return 0;
	if (t->o->mode == TRACE_MODE_INT3)
		return et_error("--mode int3: %s (--mode trampoline traces without it)", k->no_int3);
	if (t->o->graph)
		return et_error("--graph: its return breakpoints are int3s, and %s", k->no_int3);
	return 0;
}

/* Said once the trace is set up: a run that stops at bad input says that
 * alone, in one line. */
static void say_trampolines_only(const struct tracer *t)
{
	const struct kvm_traits *k = t->m->vm.traits;

	if (k && !k->int3_exits && t->o->mode == TRACE_MODE_AUTO && t->patches.nr)
		et_warn("%s: tracing with trampolines only", k->no_int3);
}

static int arm_until(struct tracer *t)
{
	uint64_t addr;

	if (!t->o->until)
		return 0;
	if (symbols_addr(&t->m->symbols, t->o->until, &addr))
		return et_error("--until: no symbol '%s' in this kernel", t->o->until);
	/* A hardware breakpoint, not the site's int3: it still fires after
	 * the handoff has removed the int3s. */
	return guest_debug_set_hw(&t->m->vcpu, MACHINE_HW_BP_UNTIL, addr, on_until, t);
}

/* Time zero for every report: the guest TSC as the guest is about to run
 * its first instruction (machine_run() comes right after tracer_attach()).
 * Without it (KVM refused the MSR) reports count from the earliest event. */
static int write_time_zero(struct tracer *t)
{
	uint64_t tsc = vcpu_guest_tsc(&t->m->vcpu);

	if (!tsc)
		return 0;
	t->has_origin = true;
	t->origin_tsc = tsc;
	return trace_writer_clock(t->rec.out, tsc);
}

int tracer_attach(struct tracer *t, struct machine *m, const struct trace_options *o)
{
	size_t capacity = o->buf_size / sizeof(struct et_ring_record);

	memset(t, 0, sizeof(*t));
	t->m = m;
	t->o = o;
	if (recorder_init(&t->rec, &m->vcpu, capacity, o->overflow, o->max_events) ||
	    flight_recorder_init(&t->fr, o->tail, m, &t->graph, t->rec.tsc_khz))
		return -1;
	t->rec.tap = flight_recorder_add;
	t->rec.tap_ctx = &t->fr;
	if (check_int3(t) || select_sites(t) ||
	    tramp_mode_attach(&t->tramp, o->mode, m, &t->patches, &t->rec, o->oneshot,
			      o->batch_events) ||
	    graph_attach(&t->graph, o->graph, &m->kernel, &m->symbols, &m->vm.mem, &t->rec) ||
	    arm_until(t) || attach_handoff(t) ||
	    exit_events_attach(&t->exits, &m->vcpu, &t->rec, &t->tramp, o->trace_msrs,
			       o->nr_trace_msrs, o->no_exits) ||
	    guest_debug_set_int3(&m->vcpu, on_int3, t))
		return -1;
	/* Last: a bad --until or --handoff must not have replaced an
	 * existing file. */
	if (open_output(t))
		return -1;
	exit_cost_time_at_start(&t->cost, &m->vcpu);
	say_trampolines_only(t);
	site_patches_arm(&t->patches, &m->vm.mem);
	t->capturing = true;
	if (start_flight_recorder(t))
		return -1;
	/* Everything from here on works from the patches and the symbols:
	 * the site table and the kernel file's bytes can go. */
	sites_free(&t->sites);
	if (machine_release_image(m))
		return -1;
	/* The vCPU runs on this thread (machine_run). */
	exit_cost_start_waiting(&t->cost);
	if (write_time_zero(t))
		return -1;
	host_waits_attach(&t->waits, m, &t->rec, t->has_origin ? t->origin_tsc : recorder_now(&t->rec));
	/* Calls the guest records without exits: waits go between them. */
	host_waits_place_by(&t->waits, guest_call_tscs, t);
	return 0;
}

int tracer_finish(struct tracer *t)
{
	char reason[sizeof(t->fr.end)], write_error[320];
	uint64_t dropped, recorded, lost;
	int ret;

	/* First: the wait for a host CPU counts the run, not this. */
	exit_cost_finish(&t->cost);
	flight_recorder_stop(&t->fr);
	tracer_stop_capture(t, NULL);
	exit_events_detach(&t->exits);
	host_waits_detach(&t->waits, t->m);
	kernel_ring_read(&t->kring, true);
	recorder_flush(&t->rec);
	handoff_read_guest_ring(&t->handoff, true);
	/* Every event is in: a crash or a hang gets its report now. */
	flight_recorder_finish(&t->fr);

	recorded = t->rec.buf.recorded + t->handoff.guest_events + t->kring.texts + t->kring.raw;
	dropped = t->rec.buf.dropped + t->handoff.guest_lost + t->kring.overwritten +
		  t->kring.not_written;
	snprintf(reason, sizeof(reason), "%s",
		 t->fr.end[0] ? t->fr.end : run_end_name(vm_stop_reason(&t->m->vm)));
	/* What the tracer's exits cost the guest, for durations without it. */
	if (vcpu_guest_tsc_is_free(&t->m->vcpu)) {
		const struct exit_cost *c = &t->cost;
		const struct trace_overhead ov = {
			.tsc = recorder_now(&t->rec),
			.exits = t->bp_charge.exits,
			.exit_ticks = t->bp_charge.ticks,
			.drains = t->tramp.drain_charge.exits,
			.drain_ticks = t->tramp.drain_charge.ticks,
			.rest_ticks = c->exit_rest_ticks,
			.waited_ticks = (uint64_t)((unsigned __int128)c->waited_ns * t->rec.tsc_khz /
						   1000000u),
			.flags = (c->waited_known && t->rec.tsc_khz ? TRACE_OVERHEAD_WAITED_KNOWN : 0) |
				 (c->nr_rest_samples ? TRACE_OVERHEAD_REST_IN_RUN : 0),
		};

		trace_writer_overhead(t->rec.out, &ov);
	}
	/* A full disk must not pass silently: keep what the writer says. */
	lost = trace_writer_lost(t->rec.out);
	snprintf(write_error, sizeof(write_error), "%s", trace_writer_error(t->rec.out));
	ret = trace_writer_close(t->rec.out, recorded, dropped, reason);
	t->rec.out = NULL;
	if (!ret && write_error[0])
		ret = et_error("%s; %" PRIu64 " events were not stored (END in the file counts them)",
			       write_error, lost);
	return ret;
}

void tracer_progress_sample(void *tracer, struct progress_sample *s)
{
	const struct tracer *t = tracer;
	/* Racy reads of counters the vCPU thread updates: aligned words, at
	 * worst a moment old. */
	uint64_t last = __atomic_load_n(&t->rec.last_tsc, __ATOMIC_RELAXED);
	uint64_t khz = t->rec.tsc_khz;

	s->events = __atomic_load_n(&t->rec.buf.recorded, __ATOMIC_RELAXED);
	s->dropped = __atomic_load_n(&t->rec.buf.dropped, __ATOMIC_RELAXED);
	s->has_time = t->has_origin && khz && last >= t->origin_tsc;
	s->guest_ns = s->has_time ? (uint64_t)((unsigned __int128)(last - t->origin_tsc) * 1000000u / khz)
				  : 0;
	s->quiet_marker = __atomic_load_n(&t->m->uart.tx_bytes, __ATOMIC_RELAXED);
}

void tracer_free(struct tracer *t)
{
	exit_events_detach(&t->exits);
	flight_recorder_free(&t->fr);
	kernel_ring_free(&t->kring);
	graph_free(&t->graph);
	recorder_free(&t->rec);
	site_patches_free(&t->patches);
	tramp_mode_free(&t->tramp);
	site_selection_free(&t->selection);
	site_filter_free(&t->filter);
	sites_free(&t->sites);
	memset(t, 0, sizeof(*t));
}
