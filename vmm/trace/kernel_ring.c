/* SPDX-License-Identifier: MIT */
#include "vmm/trace/kernel_ring.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vmm/util/error.h"

int kernel_ring_prepare(struct kernel_ring *kr, const struct kernel_image *img,
			const struct symbols *syms, struct recorder *rec, struct vcpu *vcpu)
{
	memset(kr, 0, sizeof(*kr));
	kr->rec = rec;
	kr->vcpu = vcpu;
	kr->syms = &syms->tab;
	if (ftrace_layout_from_image(&kr->layout, img))
		return et_error_prefix("--follow: %s: cannot read the kernel's ring buffers", img->name);
	if (symbols_addr(syms, "global_trace", &kr->global_trace))
		return et_error("--follow: %s: no symbol global_trace (%s; a kernel built "
				"without CONFIG_KALLSYMS_ALL hides it: give --symbols System.map)",
				img->name, syms->desc[0] ? syms->desc : "no symbols");
	return 0;
}

static int read_guest(void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	struct kernel_ring *kr = ctx;

	return arch_read_virt(&kr->vcpu->vm->mem, &kr->paging, vaddr, buf, len);
}

static int write_guest(void *ctx, uint64_t vaddr, const void *buf, size_t len)
{
	struct kernel_ring *kr = ctx;

	return arch_write_virt(&kr->vcpu->vm->mem, &kr->paging, vaddr, buf, len);
}

static int symbol_name(void *ctx, uint64_t addr, bool with_offset, char *buf, size_t size)
{
	const struct kernel_ring *kr = ctx;
	uint64_t off;
	const struct symbol *s = symtab_lookup(kr->syms, addr, &off);

	if (!s)
		return -1;
	if (with_offset && off)
		snprintf(buf, size, "%s+0x%" PRIx64, s->name, off);
	else
		snprintf(buf, size, "%s", s->name);
	return 0;
}

int kernel_ring_start_with(struct kernel_ring *kr, ftrace_read_fn read, ftrace_write_fn write,
			   void *ctx)
{
	struct ftrace_reader_config cfg = {
		.layout = &kr->layout,
		.global_trace = kr->global_trace,
		.read = read,
		.read_ctx = ctx,
		.symbol = symbol_name,
		.symbol_ctx = kr,
	};

	if (kr->reader)
		return 0;
	kr->read = read;
	kr->write = write;
	kr->mem_ctx = ctx;
	kr->takeover_tsc = recorder_now(kr->rec);
	kr->reader = ftrace_reader_new(&cfg);
	return kr->reader ? 0 : et_error_prefix("--follow");
}

int kernel_ring_start(struct kernel_ring *kr)
{
	struct kvm_sregs sregs;

	/* The kernel's own page tables (init_mm's, at this point of boot):
	 * its buffers live in the direct map and vmalloc space, which every
	 * later page table shares, so these serve the whole run. */
	if (vcpu_get_sregs(kr->vcpu, &sregs))
		return et_error_errno("--follow: cannot read the vCPU's page-table root");
	kr->paging = arch_paging_of(&sregs);
	return kernel_ring_start_with(kr, read_guest, write_guest, kr);
}

/* The guest time between earlytrace's last capture and the kernel's first
 * event: what neither side saw (ftrace patching the code, its tracer
 * starting), said once in the trace. */
static void mark_blind_window(struct kernel_ring *kr, uint64_t first_tsc)
{
	uint64_t cycles = first_tsc > kr->takeover_tsc ? first_tsc - kr->takeover_tsc : 0;
	char text[200];

	if (kr->rec->tsc_khz)
		snprintf(text, sizeof(text),
			 "follow: blind window of %.3f ms: from earlytrace's last capture to the "
			 "kernel's first ftrace event",
			 (double)cycles / (double)kr->rec->tsc_khz);
	else
		snprintf(text, sizeof(text),
			 "follow: blind window of %" PRIu64 " TSC cycles: from earlytrace's last "
			 "capture to the kernel's first ftrace event",
			 cycles);
	recorder_mark(kr->rec, first_tsc, text);
}

static void record(struct kernel_ring *kr, uint64_t tsc, uint32_t cpu, uint16_t kind,
		   uint64_t ip, uint64_t parent, uint16_t flags)
{
	struct et_ring_record ev = {
		.tsc = tsc,
		.ip = ip,
		.parent_ip = parent,
		.cpu = cpu,
		.kind = kind,
		.flags = (uint16_t)(ET_REC_SRC_GUEST | ET_REC_F_FTRACE | flags),
	};

	recorder_record(kr->rec, &ev);
}

static void kevent(struct kernel_ring *kr, const struct ftrace_event *ev)
{
	static const uint8_t kinds[] = {
		[FTRACE_EVENT_PRINT] = TRACE_KEVENT_PRINT,
		[FTRACE_EVENT_BPRINT] = TRACE_KEVENT_BPRINT,
		[FTRACE_EVENT_BPUTS] = TRACE_KEVENT_BPUTS,
	};
	bool text = ev->kind == FTRACE_EVENT_PRINT || ev->kind == FTRACE_EVENT_BPRINT ||
		    ev->kind == FTRACE_EVENT_BPUTS;
	struct trace_kevent k = {
		.tsc = ev->ts,
		.cpu = ev->cpu,
		.type = ev->type,
		.kind = text ? kinds[ev->kind] : TRACE_KEVENT_RAW,
		.truncated = text && ev->text_truncated,
		.ip = text ? ev->ip : 0,
		.payload = ev->payload,
		.payload_len = ev->payload_len,
		.text = text && ev->text ? ev->text : "",
	};

	if (text)
		kr->texts++;
	else
		kr->raw++;
	trace_writer_kevent(kr->rec->out, &k);
}

static int on_event(void *ctx, const struct ftrace_event *ev)
{
	struct kernel_ring *kr = ctx;

	if (!kr->first_seen) {
		kr->first_seen = true;
		mark_blind_window(kr, ev->ts);
	}
	switch (ev->kind) {
	case FTRACE_EVENT_FUNCTION:
		kr->calls++;
		record(kr, ev->ts, ev->cpu, ET_REC_CALL, ev->ip, ev->parent_ip, 0);
		break;
	case FTRACE_EVENT_GRAPH_ENTRY:
		/* function_graph entries carry no parent; the exit follows. */
		kr->calls++;
		record(kr, ev->ts, ev->cpu, ET_REC_CALL, ev->func, 0, ET_REC_F_RET_TRACED);
		break;
	case FTRACE_EVENT_GRAPH_RETURN:
		kr->returns++;
		record(kr, ev->ts, ev->cpu, ET_REC_RET, ev->func, 0, 0);
		break;
	default:
		kevent(kr, ev);
		break;
	}
	return 0;
}

static void on_drops(void *ctx, const struct ftrace_drops *d)
{
	struct kernel_ring *kr = ctx;

	/* One running total per reason (trace readers keep one per reason). */
	if (d->overwritten) {
		kr->overwritten += d->overwritten;
		trace_writer_drops(kr->rec->out, kr->overwritten, d->before_ts ? d->before_ts : 0,
				   "overwritten in the kernel's ftrace ring before earlytrace read it");
	}
	if (d->not_written) {
		kr->not_written += d->not_written;
		trace_writer_drops(kr->rec->out, kr->not_written, d->before_ts ? d->before_ts : 0,
				   "not written by the kernel (its ftrace ring was full)");
	}
}

/* A fault in the guest's ring: the first is said (on stderr and in the
 * trace), the rest counted. */
static void on_warning(void *ctx, int cpu, const char *msg)
{
	struct kernel_ring *kr = ctx;

	if (kr->warnings++)
		return;
	if (cpu < 0)
		snprintf(kr->first_warning, sizeof(kr->first_warning), "--follow: the kernel's ring: %s",
			 msg);
	else
		snprintf(kr->first_warning, sizeof(kr->first_warning),
			 "--follow: the kernel's ring of CPU %d: %s", cpu, msg);
	recorder_mark_now(kr->rec, kr->first_warning);
	et_warn("%s (later warnings are only counted)", kr->first_warning);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void kernel_ring_read(struct kernel_ring *kr, bool final)
{
	const struct ftrace_sink sink = {
		.ctx = kr,
		.event = on_event,
		.drops = on_drops,
		.warning = on_warning,
	};
	uint64_t start, before = kr->calls + kr->returns + kr->texts + kr->raw;

	if (!kr->reader)
		return;
	start = now_ns();
	if (ftrace_reader_read(kr->reader, &sink, final))
		on_warning(kr, -1, et_last_error());
	kr->read_ns += now_ns() - start;
	kr->reads++;
	before = kr->calls + kr->returns + kr->texts + kr->raw - before;
	if (before > kr->read_events_max)
		kr->read_events_max = before;
}

void kernel_ring_free(struct kernel_ring *kr)
{
	ftrace_reader_free(kr->reader);
	memset(kr, 0, sizeof(*kr));
}
