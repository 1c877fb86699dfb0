/* SPDX-License-Identifier: MIT */
#include "vmm/trace/tracer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "arch/x86/boot_cpu.h"
#include "arch/x86/fentry_check.h"
#include "arch/x86/page_walk.h"
#include "vmm/error.h"
#include "vmm/trace/exit_events.h"
#include "vmm/trace/graph.h"
#include "vmm/trace/handoff.h"
#include "vmm/trace/tramp_mode.h"

int trace_mode_parse(const char *text, enum trace_mode *mode)
{
	static const char *const names[] = {
		[TRACE_MODE_AUTO] = "auto",
		[TRACE_MODE_INT3] = "int3",
		[TRACE_MODE_TRAMPOLINE] = "trampoline",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(text, names[i])) {
			*mode = (enum trace_mode)i;
			return 0;
		}
	return et_error("unknown mode '%s' (auto, int3 or trampoline)", text);
}

/* The guest's TSC now: the clock every event carries. */
uint64_t tracer_guest_tsc(struct vcpu *vcpu)
{
	return vcpu_guest_tsc(vcpu);
}

static void stop_run(struct tracer *t)
{
	vm_request_stop(&t->m->vm, VM_STOP_TRACE_DONE, 0);
}

static const char *drop_reason(const struct tracer *t)
{
	return t->buf.policy == OVERFLOW_STOP ? "host buffer full (--overflow stop)"
					      : "overwritten in the host buffer (--overflow overwrite)";
}

void tracer_record(struct tracer *t, const struct et_ring_record *ev)
{
	bool kept = host_buffer_add(&t->buf, ev);

	flight_recorder_add(&t->fr, ev);
	/* Stop mode streams every kept event at once, so a crash or a kill
	 * loses nothing; a flight recorder writes its buffer at the end. */
	if (kept && t->buf.policy == OVERFLOW_STOP)
		trace_writer_events(t->out, ev, 1);
	/* Drops are logged as they happen (at 1, 2, 4, 8, ... so the file
	 * stays small), and the exact total again at the end: a file cut
	 * short by a kill still says events were dropped, and how many at
	 * least. */
	else if (!kept && (t->buf.dropped & (t->buf.dropped - 1)) == 0)
		trace_writer_drops(t->out, t->buf.dropped, ev->tsc, drop_reason(t));
	if (t->o->max_events && t->buf.recorded >= t->o->max_events)
		stop_run(t);
}

/* The return address the traced call pushed: at a site the function has
 * not touched its stack yet, so it is the word at the stack pointer. */
static uint64_t parent_ip(struct tracer *t, const struct kvm_regs *regs,
			  const struct kvm_sregs *sregs, const struct x86_paging *pg)
{
	bool long_mode = x86_is_64bit_code(sregs);
	uint64_t sp = x86_linear(sregs, sregs->ss.base, long_mode ? regs->rsp : (uint32_t)regs->rsp);
	uint64_t value = 0;

	if (x86_read_virt(&t->m->vm.mem, pg, sp, &value, long_mode ? 8 : 4))
		return 0;
	return value;
}

/* Records one call at `site` from the vCPU's current state. */
static void record_call(struct tracer *t, struct vcpu *vcpu, struct patched_site *site,
			const struct kvm_regs *regs, const struct kvm_sregs *sregs,
			const struct x86_paging *pg)
{
	struct et_ring_record ev = {
		.tsc = tracer_guest_tsc(vcpu),
		.ip = site->vaddr,
		.parent_ip = parent_ip(t, regs, sregs, pg),
		.cpu = vcpu->id,
		.kind = ET_REC_CALL,
		.flags = ET_REC_SRC_BREAKPOINT,
	};

	/* --graph: the return comes back through our breakpoint. */
	if (t->graph.enabled && graph_on_call(t, site->vaddr, regs, sregs, pg, ev.tsc))
		ev.flags |= ET_REC_F_RET_TRACED;
	site->hits++;
	t->bp_events++;
	tracer_record(t, &ev);
	if (t->o->oneshot)
		site_patches_disarm(&t->patches, site, &t->m->vm.mem);
}

/* The armed site under the vCPU's rip, or NULL. */
static struct patched_site *site_at_rip(struct tracer *t, const struct kvm_regs *regs,
				   const struct kvm_sregs *sregs, const struct x86_paging *pg)
{
	struct patched_site *site;
	uint64_t paddr;

	if (x86_translate(&t->m->vm.mem, pg, x86_linear(sregs, sregs->cs.base, regs->rip), &paddr, NULL))
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
	struct x86_paging pg = x86_paging_from_sregs(sregs);
	struct patched_site *site;

	if (!t->capturing)
		return false;
	site = site_at_rip(t, regs, sregs, &pg);
	if (!site && t->graph.enabled && graph_on_return(t, vcpu, regs, sregs, &pg)) {
		if (vcpu_set_regs(vcpu, regs) < 0)
			vm_request_stop(&t->m->vm, VM_STOP_VMM_ERROR, EXIT_STATUS_ERROR);
		return true;
	}
	if (!site || site->kind != PATCH_INT3)
		return false;
	record_call(t, vcpu, site, regs, sregs, &pg);
	regs->rip += SITE_LEN;
	if (vcpu_set_regs(vcpu, regs) < 0)
		vm_request_stop(&t->m->vm, VM_STOP_VMM_ERROR, EXIT_STATUS_ERROR);
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
		tramp_mode_drain(t);
	if (t->capturing && vcpu_get_regs(vcpu, &regs, &sregs) == 0) {
		struct x86_paging pg = x86_paging_from_sregs(&sregs);
		struct patched_site *site = site_at_rip(t, &regs, &sregs, &pg);

		if (site)
			record_call(t, vcpu, site, &regs, &sregs, &pg);
	}
	stop_run(t);
}

/* Stops host-side capture and puts every site, and the trampoline
 * region, back as the image has them. */
void tracer_stop_capture(struct tracer *t, const char *how)
{
	if (!t->capturing)
		return;
	tramp_mode_drain(t);
	t->capturing = false;
	t->handed_off = true;
	t->handoff_how = how;
	graph_detach(t, how != NULL);
	site_patches_disarm_all(&t->patches, &t->m->vm.mem);
	flight_recorder_watch(&t->fr, 0, NULL);
	tramp_mode_detach(t);
	guest_debug_set_int3(&t->m->vcpu, NULL, NULL);
}

static void on_guest_panic(void *ctx, struct vcpu *vcpu)
{
	flight_recorder_on_panic(ctx, vcpu);
}

/* The flight recorder: a panic hook, and a watchdog that also sees the
 * calls trampolines record without an exit. */
static int start_flight_recorder(struct tracer *t)
{
	struct et_tramp_batch *b;

	t->m->panic_hook = on_guest_panic;
	t->m->panic_hook_ctx = t;
	if (t->tramp.installed) {
		b = guest_mem_ptr(&t->m->vm.mem, t->tramp.base + t->tramp.tpl->header, sizeof(*b));
		if (b)
			flight_recorder_watch(&t->fr, 0, &b->count);
	}
	return flight_recorder_start(t, t->o->hang_timeout_s);
}

/* A stock kernel reached the handoff symbol: its own tracer is about to
 * inspect the sites, so they must be exactly as built. */
static void on_handoff_symbol(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct tracer *t = ctx;
	char text[160];

	snprintf(text, sizeof(text), "handoff: %s reached, %zu sites restored", t->o->handoff,
		 t->patches.nr);
	tracer_stop_capture(t, t->o->handoff);
	trace_writer_mark(t->out, tracer_guest_tsc(vcpu), text);
	guest_debug_set_hw(vcpu, slot, 0, NULL, NULL);
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
	enum x86_code_mode mode = img->elf_class == 64 ? X86_CODE64 : X86_CODE32;
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
	if (code && x86_fentry_only_returns(code, 16, addr, mode, symbol_at, &t->m->symbols.tab))
		return;
	for (size_t i = 0; i < t->sites.nr; i++)
		if (t->sites.sites[i].kind == SITE_KIND_CALL)
			t->sites.sites[i].selected = false;
	fprintf(stderr,
		"earlytrace: %zu call sites left alone: __fentry__ does more than return, so a "
		"call cannot be skipped\n",
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
		.tsc_khz = t->tsc_khz,
		.mode = mode_name(t),
	};

	if (trace_writer_open(&t->out, t->o->output, &meta) ||
	    trace_writer_symbols(t->out, &t->m->symbols.tab))
		return -1;
	return 0;
}

static int arm_stops(struct tracer *t)
{
	struct vcpu *vcpu = &t->m->vcpu;
	uint64_t addr;

	if (t->o->until) {
		if (symbols_addr(&t->m->symbols, t->o->until, &addr))
			return et_error("--until: no symbol '%s' in this kernel", t->o->until);
		t->until_addr = addr;
		/* A hardware breakpoint, not the site's int3: it still fires
		 * after the handoff has removed the int3s. */
		if (guest_debug_set_hw(vcpu, MACHINE_HW_BP_UNTIL, addr, on_until, t))
			return -1;
	}
	/* A kernel without the handoff symbol simply keeps the breakpoints
	 * until it hands off through guestlib, or the run ends. */
	if (t->o->handoff && symbols_addr(&t->m->symbols, t->o->handoff, &addr) == 0 &&
	    guest_debug_set_hw(vcpu, MACHINE_HW_BP_HANDOFF, addr, on_handoff_symbol, t))
		return -1;
	return 0;
}

int tracer_attach(struct tracer *t, struct machine *m, const struct trace_options *o)
{
	size_t capacity = o->buf_size / sizeof(struct et_ring_record);

	memset(t, 0, sizeof(*t));
	t->m = m;
	t->o = o;
	t->tsc_khz = vcpu_tsc_khz(&m->vcpu);

	if (host_buffer_init(&t->buf, capacity, o->overflow) ||
	    flight_recorder_init(&t->fr, o->tail) || select_sites(t) || tramp_mode_attach(t) ||
	    graph_attach(t) || open_output(t) || arm_stops(t) || handoff_attach(t) ||
	    exit_events_attach(t) || guest_debug_set_int3(&m->vcpu, on_int3, t))
		return -1;
	site_patches_arm(&t->patches, &m->vm.mem);
	t->capturing = true;
	if (start_flight_recorder(t))
		return -1;
	/* Everything from here on works from the patches and the symbols:
	 * the site table and the kernel file's bytes can go. */
	sites_free(&t->sites);
	return machine_release_image(m);
}

/* The host buffer's final word: a flight recorder's events are written
 * only now, oldest first, and the exact number of drops closes the log. */
static void write_host_buffer(struct tracer *t)
{
	if (t->buf.policy == OVERFLOW_OVERWRITE)
		for (size_t i = 0; i < t->buf.count; i++)
			trace_writer_events(t->out, host_buffer_at(&t->buf, i), 1);
	if (t->buf.dropped)
		trace_writer_drops(t->out, t->buf.dropped,
				   t->buf.count ? host_buffer_at(&t->buf, t->buf.count - 1)->tsc : 0,
				   drop_reason(t));
}

int tracer_finish(struct tracer *t)
{
	char reason[128], write_error[320];
	uint64_t dropped, recorded, lost;
	int ret;

	flight_recorder_stop(&t->fr);
	if (t->capturing)
		tracer_stop_capture(t, NULL);
	exit_events_detach(t);
	write_host_buffer(t);
	handoff_collect_guest_ring(t);
	/* Every event is in: a crash or a hang gets its report now. */
	flight_recorder_finish(t);

	recorded = t->buf.recorded + t->guest_events;
	dropped = t->buf.dropped + t->guest_lost;
	snprintf(reason, sizeof(reason), "%s",
		 t->fr.end[0] ? t->fr.end : vm_stop_reason_name(vm_stop_reason(&t->m->vm)));
	/* A full disk must not pass silently: keep what the writer says. */
	lost = trace_writer_lost(t->out);
	snprintf(write_error, sizeof(write_error), "%s", trace_writer_error(t->out));
	ret = trace_writer_close(t->out, recorded, dropped, reason);
	t->out = NULL;
	if (!ret && write_error[0])
		ret = et_error("%s; %" PRIu64 " events were not stored (END in the file counts them)",
			       write_error, lost);

	fprintf(stderr,
		"earlytrace: trace: %" PRIu64 " events (%" PRIu64 " by breakpoints on %zu sites, %" PRIu64
		" by trampolines on %zu sites, %" PRIu64 " from the guest ring, %" PRIu64
		" VM exits), %" PRIu64 " dropped%s%s, written to %s\n",
		recorded, t->bp_events, t->patches.nr_int3, t->tramp_events, t->patches.nr_call,
		t->guest_events, t->exit_events, dropped,
		t->handed_off && t->handoff_how ? "; handoff: " : "",
		t->handed_off && t->handoff_how ? t->handoff_how : "", t->o->output);
	if (t->patches.nr_call)
		fprintf(stderr,
			"earlytrace: trampolines: %s, %" PRIu64 " records a batch, %" PRIu64
			" drains (%" PRIu64 " asked for by the guest)\n",
			t->tramp.region.desc, t->tramp.capacity, t->tramp.drains,
			t->tramp.full_drains);
	/* Hardware-independent cost: exits per event is what modes differ in. */
	fprintf(stderr, "earlytrace: vm exits: %" PRIu64 "\n", t->m->vcpu.nr_exits);
	if (t->patches.refused || t->patches.modified_by_guest)
		fprintf(stderr,
			"earlytrace: trace: %zu sites not patched (bytes differed), %zu not restored "
			"(the guest changed them)\n",
			t->patches.refused, t->patches.modified_by_guest);
	if (t->tramp_unknown_ip || t->tramp_corrupt)
		fprintf(stderr,
			"earlytrace: trampolines: %" PRIu64 " records named no site, %" PRIu64
			" batches were overwritten by the guest\n",
			t->tramp_unknown_ip, t->tramp_corrupt);
	handoff_report(t);
	if (t->graph.enabled)
		fprintf(stderr,
			"earlytrace: graph: %" PRIu64 " returns, %" PRIu64
			" frames handed back at the end of capture, %" PRIu64
			" not (the guest had changed them), %" PRIu64 " unwound, %" PRIu64
			" calls without a return\n",
			t->graph.returns, t->graph.restored, t->graph.not_restored, t->graph.unwound,
			t->graph.not_redirected);
	return ret;
}

void tracer_free(struct tracer *t)
{
	exit_events_detach(t);
	flight_recorder_free(&t->fr);
	graph_free(&t->graph);
	if (t->out)
		trace_writer_close(t->out, t->buf.recorded, t->buf.dropped, "aborted");
	site_patches_free(&t->patches);
	trampolines_free(&t->tramp);
	host_buffer_free(&t->buf);
	site_selection_free(&t->selection);
	site_filter_free(&t->filter);
	sites_free(&t->sites);
	memset(t, 0, sizeof(*t));
}
