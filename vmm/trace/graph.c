/* SPDX-License-Identifier: MIT */
#include "vmm/trace/graph.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "trampolines/region.h"
#include "vmm/trace/recorder.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"

int graph_attach(struct graph *g, bool enabled, const struct kernel_image *img,
		 const struct symbols *syms, const struct guest_mem *gm, struct recorder *rec)
{
	struct tramp_region region;
	uint8_t *p;

	memset(g, 0, sizeof(*g));
	g->rec = rec;
	g->gm = gm;
	if (!enabled)
		return 0;
	if (tramp_region_find(&region, img, syms))
		return et_error_prefix("--graph: no room for the return breakpoint");
	p = guest_mem_ptr(gm, region.paddr, 1);
	if (!p)
		return et_error("--graph: the region for the return breakpoint is not in guest RAM");
	g->bp_paddr = region.paddr;
	g->bp_virt_offset = region.vaddr - region.paddr;
	g->saved = *p;
	*p = ARCH_BREAKPOINT_INSN;
	g->installed = true;
	g->enabled = true;
	return 0;
}

static bool push(struct graph *g, const struct graph_frame *f)
{
	if (g->nr == g->cap) {
		struct graph_frame *frames;

		/* Never more than GRAPH_MAX_DEPTH frames (cap doubles from 64). */
		if (g->cap * 2 > GRAPH_MAX_DEPTH)
			return false;
		frames = array_grow(g->frames, &g->cap, sizeof(*frames), 64);
		if (!frames)
			return false;
		g->frames = frames;
	}
	g->frames[g->nr++] = *f;
	return true;
}

bool graph_on_call(struct graph *g, unsigned cpu, uint64_t func, const struct kvm_regs *regs,
		   const struct kvm_sregs *sregs, const struct arch_paging *pg, uint64_t tsc)
{
	const struct guest_mem *gm = g->gm;
	uint64_t mask = arch_address_mask(sregs);
	uint64_t rip = arch_code_address(sregs, regs);
	uint64_t sp = arch_stack_address(sregs, regs);
	struct graph_frame f = {
		.func = func, .slot = sp, .call_tsc = tsc, .word = arch_word_bytes(sregs), .cpu = cpu
	};
	uint64_t site_pa, bp_pa, end;
	uint8_t *p;

	if (!g->installed)
		return false;
	/* The breakpoint as this code runs: at the offset from physical the
	 * site runs at (before paging: none; after: the kernel's mapping),
	 * and only if that really maps to it. */
	if (arch_translate(gm, pg, rip, &site_pa, NULL))
		goto no;
	f.bp = (g->bp_paddr + (rip - site_pa)) & mask;
	if (arch_translate(gm, pg, f.bp, &bp_pa, NULL) || bp_pa != g->bp_paddr)
		goto no;
	if (arch_translate(gm, pg, sp, &f.slot_paddr, &end) || (end && end - sp < f.word))
		goto no;
	p = guest_mem_ptr(gm, f.slot_paddr, f.word);
	if (!p)
		goto no;
	f.ret = 0;
	memcpy(&f.ret, p, f.word);
	if (!push(g, &f))
		goto no;
	memcpy(p, &f.bp, f.word);
	return true;
no:
	g->not_redirected++;
	return false;
}

/* The frame of vCPU cpu a return at stack pointer sp (after the ret
 * popped its address) belongs to: the one whose slot is just below sp,
 * else (ret imm16) the outermost one still below sp. -1 if none. */
static long frame_for(const struct graph *g, unsigned cpu, uint64_t sp)
{
	long best = -1;

	for (size_t i = g->nr; i-- > 0;)
		if (g->frames[i].cpu == cpu && g->frames[i].slot + g->frames[i].word == sp)
			return (long)i;
	for (size_t i = g->nr; i-- > 0;)
		if (g->frames[i].cpu == cpu && g->frames[i].slot + g->frames[i].word <= sp &&
		    (best < 0 || g->frames[i].slot > g->frames[best].slot))
			best = (long)i;
	return best;
}

/* Takes frame i off the shadow stack (the other vCPUs' frames keep their
 * order). */
static struct graph_frame take_frame(struct graph *g, size_t i)
{
	struct graph_frame f = g->frames[i];

	memmove(&g->frames[i], &g->frames[i + 1], (g->nr - i - 1) * sizeof(*g->frames));
	g->nr--;
	return f;
}

static void record_return(struct graph *g, unsigned cpu, const struct graph_frame *f,
			  uint64_t tsc, uint16_t flags)
{
	struct et_ring_record ev = {
		.tsc = tsc,
		.ip = f->func,
		.parent_ip = f->ret,
		.cpu = cpu,
		.kind = ET_REC_RET,
		.flags = (uint16_t)(ET_REC_SRC_BREAKPOINT | flags),
	};

	recorder_record(g->rec, &ev);
}

bool graph_on_return(struct graph *g, struct vcpu *vcpu, struct kvm_regs *regs,
		     const struct kvm_sregs *sregs, const struct arch_paging *pg)
{
	uint64_t pa, sp = arch_stack_address(sregs, regs), tsc;
	long k;

	if (!g->installed ||
	    arch_translate(g->gm, pg, arch_code_address(sregs, regs), &pa, NULL) ||
	    pa != g->bp_paddr)
		return false;
	k = frame_for(g, vcpu->id, sp);
	if (k < 0) {
		/* Nowhere to send the guest: stop rather than guess. */
		et_warn("--graph: a return reached the return breakpoint with no frame for it "
			"(rsp 0x%" PRIx64 ", %zu frames): stopping the run",
			sp, g->nr);
		vm_request_stop(vcpu->vm, RUN_END_VMM_ERROR);
		return true;
	}
	tsc = recorder_now(g->rec);
	/* This vCPU's frames above the one returning were left without a
	 * return (a longjmp, a stack switch): they end here too. */
	for (size_t i = g->nr; i-- > (size_t)k + 1;)
		if (g->frames[i].cpu == vcpu->id) {
			struct graph_frame f = take_frame(g, i);

			g->unwound++;
			record_return(g, vcpu->id, &f, tsc, ET_REC_F_UNWOUND);
		}
	{
		struct graph_frame f = take_frame(g, (size_t)k);

		g->returns++;
		record_return(g, vcpu->id, &f, tsc, 0);
		arch_regs_set_ip(regs, f.ret);
	}
	return true;
}

void graph_detach(struct graph *g, bool handoff)
{
	const struct guest_mem *gm = g->gm;
	uint8_t *p;

	if (!g->installed)
		return;
	/* Outermost last, though the order does not matter: each frame has
	 * its own slot. Only where our address is still there. */
	for (size_t i = g->nr; i-- > 0;) {
		const struct graph_frame *f = &g->frames[i];
		uint64_t now = 0;

		p = guest_mem_ptr(gm, f->slot_paddr, f->word);
		if (p)
			memcpy(&now, p, f->word);
		if (p && now == f->bp) {
			memcpy(p, &f->ret, f->word);
			g->restored++;
		} else {
			g->not_restored++;
		}
	}
	p = guest_mem_ptr(gm, g->bp_paddr, 1);
	if (p && *p == ARCH_BREAKPOINT_INSN)
		*p = g->saved;
	g->installed = false;
	/* After a handoff the guest runs on: these frames mean nothing then.
	 * At the end of the run they are the stack the flight recorder shows. */
	g->stale = handoff;
}

int graph_reattach(struct graph *g)
{
	uint8_t *p;

	if (!g->enabled || g->installed)
		return 0;
	p = guest_mem_ptr(g->gm, g->bp_paddr, 1);
	if (!p)
		return et_error("--graph: the return breakpoint is no longer in guest RAM");
	g->saved = *p;
	*p = ARCH_BREAKPOINT_INSN;
	g->installed = true;
	g->nr = 0; /* the old frames were handed back at the stop */
	g->stale = false;
	return 0;
}

void graph_free(struct graph *g)
{
	free(g->frames);
	memset(g, 0, sizeof(*g));
}
