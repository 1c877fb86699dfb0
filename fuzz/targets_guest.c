/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets of the tracer's guest interfaces (see targets.h): the
 * hypercall port and the guest ring (hypercall), and trampoline mode's
 * batch drain (tramp_drain), each driven by a script of guest actions.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/site_verify.h"
#include "earlytrace/abi.h"
#include "fuzz/targets.h"
#include "fuzz/targets_helpers.h"
#include "trampolines/placement.h"
#include "trampolines/region.h"
#include "vmm/kvm/iobus.h"
#include "vmm/mem/guest_mem.h"
#include "vmm/trace/handoff.h"
#include "vmm/trace/tracer.h"
#include "vmm/trace/tramp_mode.h"
#include "vmm/trace/wait_spread.h"

/* Steps of a guest script: enough for any sequence worth trying, few
 * enough that one input stays fast (every event drained is a write). */
#define FUZZ_MAX_STEPS 64

/* A tracer around a machine that has guest RAM and an I/O bus but no KVM:
 * the code under test only reads and writes guest memory (its TSC reads
 * and guest-debug updates fail on the closed descriptors and are ignored,
 * as they would be on a broken KVM). */
struct fuzz_vmm {
	struct fuzz_ram ram;
	struct machine *m;
	struct trace_options o;
	struct tracer t;
};

static void vmm_free(struct fuzz_vmm *v)
{
	tracer_free(&v->t); /* closes the trace writer */
	if (v->m)
		iobus_free(&v->m->vm.bus);
	free(v->m);
}

static size_t vmm_stop_capture(void *ctx, const char *how)
{
	return tracer_stop_capture(ctx, how);
}

/* The tracer's parts as tracer_attach() wires them, minus the sites. */
static int vmm_init(struct fuzz_vmm *v, size_t low, size_t high, size_t buf_events,
		    enum overflow_policy policy)
{
	struct tracer *t = &v->t;

	memset(v, 0, sizeof(*v));
	if (fuzz_ram_init(&v->ram, low, high, true))
		return -1;
	v->m = calloc(1, sizeof(*v->m));
	if (!v->m) {
		vmm_free(v);
		return -1;
	}
	v->m->vm.kvm_fd = v->m->vm.vm_fd = -1;
	v->m->vm.mem = v->ram.gm;
	iobus_init(&v->m->vm.bus);
	v->m->vcpu.vm = &v->m->vm;
	v->m->vcpu.fd = -1;
	v->o.output = "/dev/null";
	t->m = v->m;
	t->o = &v->o;
	t->capturing = true;
	if (recorder_init(&t->rec, &v->m->vcpu, buf_events, policy, 0) ||
	    flight_recorder_init(&t->fr, 16, v->m, &t->graph, 1000000) ||
	    trace_writer_open(&t->rec.out, "/dev/null", NULL)) {
		vmm_free(v);
		return -1;
	}
	t->rec.tsc_khz = 1000000;
	t->rec.tap = flight_recorder_add;
	t->rec.tap_ctx = &t->fr;
	t->tramp.patches = &t->patches;
	t->tramp.rec = &t->rec;
	t->tramp.gm = &v->m->vm.mem;
	t->graph.gm = &v->m->vm.mem;
	t->graph.rec = &t->rec;
	return 0;
}

/* A host wait spread over the calls the guest recorded (n of them, up to
 * 64 in tscs), as host_waits.c does at an exit: the pieces must be in TSC
 * order, inside the run, none empty, and add up to no more than the wait. */
static void spread_checked(uint64_t *tscs, size_t n)
{
	struct wait_piece pieces[8];
	uint64_t sum = 0;

	n = wait_spread(tscs, n < 64 ? n : 64, 0, UINT64_MAX, 1000000, pieces, 8);
	for (size_t i = 0; i < n; i++) {
		sum += pieces[i].ticks;
		if (!pieces[i].ticks || (i && pieces[i].tsc < pieces[i - 1].tsc))
			abort();
	}
	if (sum > 1000000)
		abort();
}

/* What a guest does on the hypercall port, one step per opcode. */
enum {
	HC_OP_WRITE,  /* gpa, u8 len, bytes */
	HC_OP_BLOCK,  /* gpa, u8 version (0: ours), u8 nr, u64 arg0, u64 arg1 */
	HC_OP_RING,   /* gpa, u32 capacity, u64 head, u8 damage, u64 tsc_khz */
	HC_OP_STRING, /* gpa, u16 len, bytes, then a NUL */
	HC_OP_IO,     /* u8 how (size, read, port offset), u32 value */
	HC_OP_EVENTS, /* u8 count: calls recorded by the VMM before the handoff,
		       * each on vCPU (its index % 4) */
	HC_OP_REFS,   /* gpa, u8 count, then per ring: gpa, u32 bytes (an
		       * ET_HC_HANDOFF_PERCPU array; 8 rings at most) */
	HC_OP_NR,
};

int fuzz_hypercall(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct fuzz_vmm v;
	uint8_t flags = in_u8(&in);
	size_t buf_events = 1 + in_le(&in, 2) % 4096;

	if (vmm_init(&v, FUZZ_VMM_RAM_LOW, FUZZ_VMM_RAM_HIGH, buf_events,
		     flags & 1 ? OVERFLOW_OVERWRITE : OVERFLOW_STOP))
		return -1;
	v.t.rec.max_events = flags & 2 ? in_le(&in, 2) : 0;
	static const struct handoff_ops ops = { .stop_capture = vmm_stop_capture };
	const struct handoff_config cfg = {
		.vm = &v.m->vm,
		.vcpu = &v.m->vcpu,
		/* flags bits 2-3: the machine's vCPUs, 1 to 4 (rings it may
		 * hand over per CPU) */
		.nr_vcpus = 1 + ((flags >> 2) & 3),
		.syms = &v.m->symbols,
		.rec = &v.t.rec,
		.fr = &v.t.fr,
		.tramp = &v.t.tramp.tramp,
		.ops = &ops,
		.ctx = &v.t,
	};

	if (handoff_attach(&v.t.handoff, &cfg)) {
		vmm_free(&v);
		return -1;
	}
	for (unsigned step = 0; in.n && step < FUZZ_MAX_STEPS; step++) {
		const struct guest_mem *gm = &v.m->vm.mem;
		uint8_t op = in_u8(&in) % HC_OP_NR;
		uint64_t gpa = op < HC_OP_IO || op == HC_OP_REFS ? fuzz_in_gpa(&in) : 0;

		switch (op) {
		case HC_OP_WRITE: {
			size_t len = in_u8(&in);
			const uint8_t *b = in_bytes(&in, &len);

			fuzz_ram_write(gm, gpa, b, len);
			break;
		}
		case HC_OP_BLOCK: {
			uint8_t version = in_u8(&in);
			struct et_hypercall hc = {
				.abi_version = version ? version : ET_ABI_VERSION,
				.nr = in_u8(&in),
				.result = 0x5a5a5a5a,
			};

			hc.arg0 = in_le(&in, 8);
			hc.arg1 = in_le(&in, 8);
			fuzz_ram_write(gm, gpa, &hc, sizeof(hc));
			break;
		}
		case HC_OP_RING: {
			struct et_ring ring = {
				.magic = ET_RING_MAGIC,
				.abi_version = ET_ABI_VERSION,
				.record_size = sizeof(struct et_ring_record),
			};
			uint8_t damage;

			ring.capacity = (uint32_t)in_le(&in, 4);
			ring.head = in_le(&in, 8);
			damage = in_u8(&in);
			ring.tsc_khz = in_le(&in, 8);
			ring.magic ^= damage & 1;
			ring.abi_version ^= (damage >> 1) & 1;
			ring.record_size ^= (damage >> 2) & 1;
			fuzz_ram_write(gm, gpa, &ring, sizeof(ring));
			break;
		}
		case HC_OP_STRING: {
			size_t len = in_le(&in, 2) % 1024;
			const uint8_t *b = in_bytes(&in, &len);
			static const uint8_t nul;

			fuzz_ram_write(gm, gpa, b, len);
			fuzz_ram_write(gm, gpa + len, &nul, 1);
			break;
		}
		case HC_OP_IO: {
			static const uint32_t sizes[4] = { 1, 2, 4, 8 };
			uint8_t how = in_u8(&in), buf[8] = { 0 };

			put_le32(buf, (uint32_t)in_le(&in, 4));
			iobus_access(&v.m->vm.bus, IOBUS_PIO, ET_PORT_HYPERCALL + ((how >> 3) & 3),
				     buf, sizes[how & 3], !(how & 4));
			break;
		}
		case HC_OP_REFS: {
			unsigned count = in_u8(&in) % 9;

			for (unsigned i = 0; i < count; i++) {
				struct et_ring_ref ref;

				ref.paddr = fuzz_in_gpa(&in);
				ref.bytes = in_le(&in, 4);
				fuzz_ram_write(gm, gpa + i * sizeof(ref), &ref, sizeof(ref));
			}
			break;
		}
		default: {
			unsigned count = in_u8(&in);

			for (unsigned i = 0; i < count && v.t.capturing; i++) {
				struct et_ring_record ev = {
					.tsc = 1000 + i,
					.ip = 0xffffffff81000000ull + 16 * i,
					.parent_ip = 0xffffffff81000000ull,
					.cpu = i % 4,
					.kind = ET_REC_CALL,
					.flags = ET_REC_SRC_BREAKPOINT,
				};

				recorder_record(&v.t.rec, &ev);
			}
			break;
		}
		}
		/* A host wait placed between the unread calls (host_waits.c),
		 * then the tracer's periodic read, between the guest's steps. */
		uint64_t tscs[64];

		spread_checked(tscs, handoff_guest_tscs(&v.t.handoff, step % 4, 0, UINT64_MAX, tscs, 64));
		handoff_read_guest_ring(&v.t.handoff, false);
	}
	/* The end of the run, as tracer_finish() does it. */
	tracer_stop_capture(&v.t, NULL);
	handoff_read_guest_ring(&v.t.handoff, true);
	vmm_free(&v);
	return 0;
}

/* What a guest (or its trampolines) does to the batch, one step per opcode. */
enum {
	TD_OP_WRITE,   /* gpa, u8 len, bytes */
	TD_OP_HEADER,  /* u8 field, u64 value: one field of the batch header */
	TD_OP_RECORD,  /* u16 index, u8 site, u32 tsc, u64 parent: one record */
	TD_OP_FILL,    /* u8 count: the trampolines' recordings, reserved and written */
	TD_OP_DRAIN,   /* the guest's full-batch exit */
	TD_OP_RESERVE, /* u8 count: recordings reserved, not written (interrupted) */
	TD_OP_NR,
};

#define TD_MAX_SITES 64

/* The return address a trampoline records for site k (or a stray one). */
static uint64_t td_ret(const struct site_patches *sp, uint8_t k, struct input *in)
{
	if (sp->nr && k < 0xf0)
		return sp->sites[k % sp->nr].vaddr + X86_SITE_LEN;
	if (sp->nr && k < 0xf8)
		return sp->sites[k % sp->nr].paddr + X86_SITE_LEN; /* before paging */
	return in_le(in, 8);
}

static int compare_site_paddr(const void *a, const void *b)
{
	const struct patched_site *x = a, *y = b;

	return x->paddr < y->paddr ? -1 : x->paddr > y->paddr;
}

int fuzz_tramp_drain(const uint8_t *data, size_t size)
{
	const uint8_t *nop5 = x86_nop5;
	struct input in = { data, size };
	struct fuzz_vmm v;
	struct tramp_region region = { .desc = "fuzz region" };
	const struct guest_mem *gm;
	struct trampolines *tr;
	struct site_patches *sp;
	uint8_t flags = in_u8(&in), voff;
	size_t buf_events = 1 + in_le(&in, 2) % 4096, nr_sites;
	uint64_t batch_events, virt_offset;
	unsigned elf_class = flags & 1 ? 32 : 64;

	if (vmm_init(&v, FUZZ_VMM_RAM_LOW, FUZZ_VMM_RAM_HIGH, buf_events,
		     flags & 4 ? OVERFLOW_OVERWRITE : OVERFLOW_STOP))
		return -1;
	gm = &v.m->vm.mem;
	tr = &v.t.tramp.tramp;
	sp = &v.t.patches;
	v.o.oneshot = v.t.tramp.oneshot = flags & 2;
	v.t.rec.max_events = in_le(&in, 2);
	batch_events = in_le(&in, 2);
	region.paddr = in_le(&in, 4) % FUZZ_VMM_RAM_LOW;
	region.size = in_le(&in, 4) % FUZZ_VMM_RAM_LOW;
	voff = in_u8(&in);
	virt_offset = voff == 0 ? 0
		      : voff == 1 ? (elf_class == 64 ? 0xffffffff80000000ull : 0xc0000000ull)
				  : in_le(&in, 8);
	region.vaddr = region.paddr + virt_offset;

	/* Sites, as site_patches_init() makes them from a loaded kernel. */
	nr_sites = in_u8(&in) % (TD_MAX_SITES + 1);
	sp->sites = calloc(nr_sites ? nr_sites : 1, sizeof(*sp->sites));
	if (!sp->sites) {
		vmm_free(&v);
		return -1;
	}
	for (size_t i = 0; i < nr_sites; i++) {
		struct patched_site *s = &sp->sites[sp->nr++];
		uint8_t odd = in_u8(&in);

		s->paddr = in_le(&in, 4) % FUZZ_VMM_RAM_LOW;
		s->vaddr = odd & 1 ? in_le(&in, 8) : s->paddr + virt_offset;
		memcpy(s->orig, nop5, X86_SITE_LEN);
		site_patch_set_int3(s);
		fuzz_ram_write(gm, s->paddr, nop5, X86_SITE_LEN);
	}
	qsort(sp->sites, sp->nr, sizeof(*sp->sites), compare_site_paddr);

	/* tramp_mode_attach() from the region on: plan, install, route, arm. */
	if (trampolines_plan(tr, &region, elf_class, v.o.oneshot ? sp->nr : 0, batch_events) ||
	    trampolines_install(tr, gm)) {
		vmm_free(&v);
		return -1;
	}
	for (size_t i = 0; i < sp->nr; i++)
		tramp_route_site(tr, &sp->sites[i], v.o.oneshot, gm);
	trampolines_batch_reset(tr, gm, tr->capacity);
	site_patches_arm(sp, gm);

	for (unsigned step = 0; in.n && step < FUZZ_MAX_STEPS && v.t.capturing; step++) {
		uint8_t op = in_u8(&in) % TD_OP_NR;
		uint64_t header = tr->base + tr->tpl->header, records = tr->base + tr->tpl->size;

		switch (op) {
		case TD_OP_WRITE: {
			uint64_t gpa = fuzz_in_gpa(&in);
			size_t len = in_u8(&in);
			const uint8_t *b = in_bytes(&in, &len);

			fuzz_ram_write(gm, gpa, b, len);
			break;
		}
		case TD_OP_HEADER: {
			uint8_t field = in_u8(&in) % 6;
			uint64_t value = in_le(&in, 8);

			/* magic, abi_version (u32 each), records, capacity, cursor, start */
			fuzz_ram_write(gm, header + (field < 2 ? 4 * field : 8 * (field - 1)), &value,
				  field < 2 ? 4 : 8);
			break;
		}
		case TD_OP_RECORD: {
			uint64_t idx = in_le(&in, 2);
			struct et_ring_record rec = { 0 };

			rec.ip = td_ret(sp, in_u8(&in), &in);
			rec.tsc = in_le(&in, 4);
			rec.parent_ip = in_le(&in, 8);
			fuzz_ram_write(gm, records + idx * sizeof(rec), &rec, sizeof(rec));
			break;
		}
		case TD_OP_FILL:
		case TD_OP_RESERVE: {
			/* As the trampolines do it: an xadd of 32 on the cursor,
			 * the record at that offset from the array's end. */
			uint64_t end = records + tr->capacity * sizeof(struct et_ring_record);
			int64_t cursor;
			unsigned count = in_u8(&in);

			for (unsigned i = 0; i < count; i++) {
				struct et_ring_record rec = {
					.tsc = 5000 + i,
					.ip = td_ret(sp, (uint8_t)i, &in),
					.parent_ip = 0xffffffff81000000ull,
				};

				if (guest_mem_read(gm, header + ET_TB_OFF_CURSOR, &cursor, sizeof(cursor)))
					break;
				if (elf_class == 32)
					cursor = (int32_t)(uint32_t)cursor;
				if (cursor >= 0)
					break; /* full: the trampoline would exit */
				cursor += (int64_t)sizeof(rec);
				fuzz_ram_write(gm, header + ET_TB_OFF_CURSOR, &cursor, sizeof(cursor));
				if (op == TD_OP_FILL)
					fuzz_ram_write(gm, end + (uint64_t)(cursor - (int64_t)sizeof(rec)), &rec,
						  sizeof(rec));
			}
			break;
		}
		default: {
			/* A host wait placed between the batch's calls, as an
			 * exit does it (host_waits.c), then the drain. */
			uint64_t tscs[64];

			spread_checked(tscs, tramp_mode_batch_tscs(&v.t.tramp, 0, 0, UINT64_MAX, tscs, 64));
			tramp_mode_drain(&v.t.tramp);
			break;
		}
		}
	}
	/* The handoff or the end of the run: a last drain, sites restored,
	 * trampolines removed. */
	tracer_stop_capture(&v.t, NULL);
	vmm_free(&v);
	return 0;
}
