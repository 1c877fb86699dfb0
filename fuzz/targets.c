/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets' shared "feed bytes" logic (see targets.h). Compiled
 * into the libFuzzer binaries (clang, build/fuzz/) and into the gcc test
 * binary, never into libearlytrace.a.
 *
 * Guest memory for the targets that drive guest-facing code is heap
 * memory, not mmap'ed, so AddressSanitizer has redzones right after each
 * region and an access the bounds checks let through is reported, not
 * silently read. It is allocated once per size and cleared (or entirely
 * overwritten) for every input, so no input sees another's bytes.
 */
#include "fuzz/targets.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "arch/x86/page_walk.h"
#include "arch/x86/site_verify.h"
#include "earlytrace/abi.h"
#include "vmm/boot/boot.h"
#include "vmm/check/expect.h"
#include "vmm/error.h"
#include "vmm/kvm/guest_mem.h"
#include "vmm/kvm/iobus.h"
#include "vmm/loader/bzimage.h"
#include "vmm/loader/decompress.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/panic_message.h"
#include "vmm/report/report.h"
#include "vmm/sites/sites.h"
#include "vmm/symbols/kallsyms.h"
#include "vmm/symbols/symbols.h"
#include "vmm/trace/handoff.h"
#include "vmm/trace/trace_file.h"
#include "vmm/trace/tracer.h"
#include "vmm/trace/tramp_mode.h"
#include "trampolines/region.h"
#include "trampolines/placement.h"

/* Larger announced kernels are skipped, not decompressed: the VMM accepts
 * up to BZ_MAX_KERNEL_SIZE (1 GiB), which is memory a fuzzer cannot spend
 * per input. The check for the real limit is exercised all the same. */
#define FUZZ_MAX_KERNEL (64u << 20)
/* Guest RAM of the targets that load or walk guest memory. */
#define FUZZ_RAM_HIGH_GPA 0x100000000ull /* high RAM starts at 4 GiB */
#define FUZZ_KERNEL_RAM (16u << 20)
#define FUZZ_VMM_RAM_LOW (2u << 20)
#define FUZZ_VMM_RAM_HIGH (64u << 10)
#define FUZZ_WALK_RAM_LOW (1u << 20)
#define FUZZ_WALK_READ_MAX (64u << 10)
/* Steps of a guest script: enough for any sequence worth trying, few
 * enough that one input stays fast (every event drained is a write). */
#define FUZZ_MAX_STEPS 64

/* ---- input helpers ---------------------------------------------------- */

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t in_u8(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* Little-endian; missing bytes read as 0. */
static uint64_t in_le(struct input *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)in_u8(in) << (8 * i);
	return v;
}

/* Up to len bytes of the input; *len is cut to what was left. */
static const uint8_t *in_bytes(struct input *in, size_t *len)
{
	const uint8_t *p = in->p;

	if (*len > in->n)
		*len = in->n;
	in->p += *len;
	in->n -= *len;
	return p;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * The bytes as a file, for entry points that take a path: one memfd per
 * process, rewritten for each input and named through /proc/self/fd, so
 * the code under test opens and reads it exactly as it would a disk file.
 */
const char *fuzz_as_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	size_t done = 0;

	if (fd < 0) {
		fd = memfd_create("earlytrace-fuzz", MFD_CLOEXEC);
		if (fd < 0)
			return NULL;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0))
		return NULL;
	while (done < size) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);

		if (n <= 0)
			return NULL;
		done += (size_t)n;
	}
	return path;
}

/* ---- guest RAM -------------------------------------------------------- */

struct fuzz_ram {
	struct guest_mem gm;
	uint8_t *low, *high;
};

/* One heap buffer per size, allocated once and reused by every input:
 * allocating megabytes per input would dominate the run time. Heap, not
 * mmap, so AddressSanitizer's redzones sit right after each region. */
static uint8_t *ram_buffer(size_t size)
{
	static struct {
		size_t size;
		uint8_t *p;
	} cache[4];

	for (size_t i = 0; i < sizeof(cache) / sizeof(cache[0]); i++) {
		if (!cache[i].p) {
			cache[i].p = malloc(size);
			cache[i].size = size;
		}
		if (cache[i].size == size)
			return cache[i].p;
	}
	return NULL;
}

/* Low RAM at 0 and, when high is not 0, high RAM at 4 GiB: the two
 * regions guest_mem_init() makes around the MMIO hole. Zeroed unless the
 * caller overwrites every byte itself. */
static int ram_init(struct fuzz_ram *r, size_t low, size_t high, bool zero)
{
	memset(r, 0, sizeof(*r));
	r->low = ram_buffer(low);
	r->high = high ? ram_buffer(high) : NULL;
	if (!r->low || (high && !r->high))
		return -1;
	if (zero) {
		memset(r->low, 0, low);
		if (high)
			memset(r->high, 0, high);
	}
	r->gm.host = r->low;
	r->gm.size = low + high;
	r->gm.regions[0] = (struct guest_mem_region){ .gpa = 0, .size = low, .host = r->low };
	r->gm.nr_regions = 1;
	if (high) {
		r->gm.regions[1] = (struct guest_mem_region){
			.gpa = FUZZ_RAM_HIGH_GPA, .size = high, .host = r->high
		};
		r->gm.nr_regions = 2;
	}
	return 0;
}

/* A guest-physical address from 32 input bits: bit 31 picks high RAM, so
 * both regions (and the addresses just past each) are easy to reach. */
static uint64_t in_gpa(struct input *in)
{
	uint32_t v = (uint32_t)in_le(in, 4);

	return v & 0x80000000u ? FUZZ_RAM_HIGH_GPA + (v & 0x7fffffffu) : v;
}

/* Copies what fits of [src, src+len) to gpa; nothing when gpa is not RAM. */
static void ram_write(const struct guest_mem *gm, uint64_t gpa, const void *src, size_t len)
{
	while (len && !guest_mem_ptr(gm, gpa, len))
		len--;
	if (len)
		memcpy(guest_mem_ptr(gm, gpa, len), src, len);
}

/* ---- kernels ---------------------------------------------------------- */

/* What the commands do with a kernel once it parsed. */
static void use_kernel(struct kernel_image *img)
{
	uint8_t id[64];
	size_t id_len;
	struct symbols syms;
	enum boot_protocol proto;

	kernel_image_build_id(img, id, &id_len);
	kernel_image_vaddr_bytes(img, img->entry, 16, NULL, NULL);
	if (symbols_load(&syms, img, NULL) == 0) {
		struct site_table sites;
		struct tramp_region region;
		char buf[128];

		symtab_format(&syms.tab, img->entry, buf, sizeof(buf));
		if (sites_find(&sites, img, &syms) == 0)
			sites_free(&sites);
		tramp_region_find(&region, img, &syms);
		symbols_free(&syms);
	}
	if (boot_choose_protocol(img, BOOT_AUTO, &proto) == 0) {
		/* The run's own RAM: mmap'ed, pages cost only once touched. */
		struct guest_mem gm;
		struct boot_request req = { .protocol = proto, .cmdline = "console=ttyS0" };
		struct kvm_regs regs;
		struct kvm_sregs sregs;

		memset(&regs, 0, sizeof(regs));
		memset(&sregs, 0, sizeof(sregs));
		if (guest_mem_init(&gm, FUZZ_KERNEL_RAM))
			return;
		if (kernel_image_load(img, &gm) == 0)
			boot_prepare(&gm, img, &req, &regs, &sregs);
		guest_mem_free(&gm);
	}
}

int fuzz_elf(const uint8_t *data, size_t size)
{
	struct kernel_image img;

	if (kernel_image_parse(&img, data, size, "fuzz.elf"))
		return -1;
	use_kernel(&img);
	kernel_image_close(&img);
	return 0;
}

int fuzz_bzimage(const uint8_t *data, size_t size)
{
	struct bzimage_info bz;
	struct kernel_image img;
	const char *path;

	if (!bzimage_detect(data, size)) {
		/* A bare payload: u32 announced size, then the compressed bytes. */
		uint8_t *out;
		size_t expected;

		if (size < 4)
			return -1;
		expected = get_le32(data) % FUZZ_MAX_KERNEL;
		if (decompress(data + 4, size - 4, expected, &out))
			return -1;
		if (kernel_image_parse(&img, out, expected, "fuzz.payload") == 0)
			kernel_image_close(&img);
		free(out);
		return 0;
	}
	if (bzimage_parse(data, size, &bz) == 0 && bz.kernel_size > FUZZ_MAX_KERNEL)
		return -1;
	path = fuzz_as_file(data, size);
	if (!path || kernel_image_open(&img, path))
		return -1;
	use_kernel(&img);
	kernel_image_close(&img);
	return 0;
}

/* ---- symbols ---------------------------------------------------------- */

static void use_symtab(const struct symtab *tab)
{
	char buf[128];
	uint64_t off;

	for (size_t i = 0; i < tab->nr && i < 64; i++) {
		symtab_lookup(tab, tab->syms[i].addr + 1, &off);
		symtab_format(tab, tab->syms[i].addr, buf, sizeof(buf));
		symtab_find(tab, tab->syms[i].name);
	}
	symtab_lookup(tab, 0, &off);
	symtab_lookup(tab, UINT64_MAX, &off);
}

int fuzz_system_map(const uint8_t *data, size_t size)
{
	struct symbols syms;
	const char *path = fuzz_as_file(data, size);

	if (!path || symbols_from_system_map(&syms, path))
		return -1;
	use_symtab(&syms.tab);
	symbols_free(&syms);
	return 0;
}

int fuzz_kallsyms(const uint8_t *data, size_t size)
{
	int ret = -1;

	for (unsigned ptr = 8; ptr >= 4; ptr -= 4) {
		struct symbols syms;
		struct kallsyms_info info;

		if (kallsyms_decode(data, size, ptr, &syms, &info))
			continue;
		use_symtab(&syms.tab);
		symbols_free(&syms);
		ret = 0;
	}
	return ret;
}

/* ---- trace files ------------------------------------------------------ */

/* Opens and reads the file; with report, also writes one report format
 * (picked by the size: each is slow to set up, so one per input). */
static int read_trace(const uint8_t *data, size_t size, bool report)
{
	static const enum report_format formats[] = { REPORT_FTRACE, REPORT_JSON, REPORT_CSV,
						       REPORT_SUMMARY, REPORT_TRACE_DAT };
	static FILE *null;
	struct trace_reader *r;
	struct trace_record rec;
	const char *path = fuzz_as_file(data, size);
	char state[256];
	size_t nr_notes;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!path || !null || trace_reader_open(&r, path))
		return -1;
	trace_reader_state(r, state, sizeof(state));
	trace_reader_notes(r, &nr_notes);
	use_symtab(trace_reader_symtab(r));
	while (trace_reader_next(r, &rec) > 0)
		;
	if (report) {
		trace_reader_rewind(r);
		report_write(r, formats[size % (sizeof(formats) / sizeof(formats[0]))], null);
	}
	trace_reader_close(r);
	return 0;
}

uint8_t *fuzz_trace_fix_crcs(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	size_t off;
	uint32_t hlen;

	hlen = size >= TRACE_FILE_HEADER_SIZE ? get_le32(data + 12) : 0;
	if (hlen < TRACE_FILE_HEADER_SIZE || hlen > size || !(copy = malloc(size)))
		return NULL;
	memcpy(copy, data, size);
	for (off = hlen; size - off >= TRACE_RECORD_OVERHEAD;) {
		uint32_t len = get_le32(copy + off + 4);

		if (len > size - off - TRACE_RECORD_OVERHEAD)
			break;
		put_le32(copy + off + 8 + len, (uint32_t)crc32(0L, copy + off, 8 + len));
		off += TRACE_RECORD_OVERHEAD + len;
	}
	return copy;
}

int fuzz_trace_reader(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	int ret;

	/* As is, then with every complete record's CRC made right: a fuzzer
	 * does not find CRC32s, so without this it would never get past them. */
	copy = fuzz_trace_fix_crcs(data, size);
	if (!copy)
		return read_trace(data, size, true);
	if (memcmp(copy, data, size)) {
		read_trace(data, size, false);
		ret = read_trace(copy, size, true);
	} else {
		ret = read_trace(data, size, true);
	}
	free(copy);
	return ret;
}

/* ---- the tracer's guest interfaces ------------------------------------ */

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
	if (ram_init(&v->ram, low, high, true))
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
		uint64_t gpa = op < HC_OP_IO || op == HC_OP_REFS ? in_gpa(&in) : 0;

		switch (op) {
		case HC_OP_WRITE: {
			size_t len = in_u8(&in);
			const uint8_t *b = in_bytes(&in, &len);

			ram_write(gm, gpa, b, len);
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
			ram_write(gm, gpa, &hc, sizeof(hc));
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
			ram_write(gm, gpa, &ring, sizeof(ring));
			break;
		}
		case HC_OP_STRING: {
			size_t len = in_le(&in, 2) % 1024;
			const uint8_t *b = in_bytes(&in, &len);
			static const uint8_t nul;

			ram_write(gm, gpa, b, len);
			ram_write(gm, gpa + len, &nul, 1);
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

				ref.paddr = in_gpa(&in);
				ref.bytes = in_le(&in, 4);
				ram_write(gm, gpa + i * sizeof(ref), &ref, sizeof(ref));
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
		/* The tracer's periodic read, between the guest's steps. */
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
		ram_write(gm, s->paddr, nop5, X86_SITE_LEN);
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
			uint64_t gpa = in_gpa(&in);
			size_t len = in_u8(&in);
			const uint8_t *b = in_bytes(&in, &len);

			ram_write(gm, gpa, b, len);
			break;
		}
		case TD_OP_HEADER: {
			uint8_t field = in_u8(&in) % 6;
			uint64_t value = in_le(&in, 8);

			/* magic, abi_version (u32 each), records, capacity, cursor, start */
			ram_write(gm, header + (field < 2 ? 4 * field : 8 * (field - 1)), &value,
				  field < 2 ? 4 : 8);
			break;
		}
		case TD_OP_RECORD: {
			uint64_t idx = in_le(&in, 2);
			struct et_ring_record rec = { 0 };

			rec.ip = td_ret(sp, in_u8(&in), &in);
			rec.tsc = in_le(&in, 4);
			rec.parent_ip = in_le(&in, 8);
			ram_write(gm, records + idx * sizeof(rec), &rec, sizeof(rec));
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
				ram_write(gm, header + ET_TB_OFF_CURSOR, &cursor, sizeof(cursor));
				if (op == TD_OP_FILL)
					ram_write(gm, end + (uint64_t)(cursor - (int64_t)sizeof(rec)), &rec,
						  sizeof(rec));
			}
			break;
		}
		default:
			tramp_mode_drain(&v.t.tramp);
			break;
		}
	}
	/* The handoff or the end of the run: a last drain, sites restored,
	 * trampolines removed. */
	tracer_stop_capture(&v.t, NULL);
	vmm_free(&v);
	return 0;
}

/* ---- page walks ------------------------------------------------------- */

/* Fills dst with src repeated (zeroes when src is empty). */
static void tile(uint8_t *dst, size_t dst_len, const uint8_t *src, size_t src_len)
{
	if (!src_len)
		return;
	for (size_t off = 0; off < dst_len; off += src_len)
		memcpy(dst + off, src, dst_len - off < src_len ? dst_len - off : src_len);
}

int fuzz_page_walk(const uint8_t *data, size_t size)
{
	static uint8_t buf[FUZZ_WALK_READ_MAX];
	struct input in = { data, size };
	struct fuzz_ram ram;
	struct x86_paging pg = { 0 };
	uint8_t mode = in_u8(&in);
	uint64_t va, pa, end;
	size_t len, body_len;
	const uint8_t *body;
	int ret;

	/* Mode bits: the control-register bits the walk reads. */
	pg.cr0 = mode & 1 ? X86_CR0_PG : 0;
	pg.cr4 = (mode & 2 ? X86_CR4_PSE : 0) | (mode & 4 ? X86_CR4_PAE : 0) |
		 (mode & 8 ? X86_CR4_LA57 : 0);
	pg.efer = (mode & 16 ? X86_EFER_LMA : 0) | (mode & 32 ? X86_EFER_NXE : 0);
	pg.cr3 = in_le(&in, 8);
	va = in_le(&in, 8);
	len = in_le(&in, 2) % (FUZZ_WALK_READ_MAX + 1);
	body_len = in.n;
	body = in_bytes(&in, &body_len);

	if (ram_init(&ram, FUZZ_WALK_RAM_LOW, FUZZ_VMM_RAM_HIGH, body_len == 0))
		return -1;
	tile(ram.low, FUZZ_WALK_RAM_LOW, body, body_len);
	tile(ram.high, FUZZ_VMM_RAM_HIGH, body, body_len);

	ret = x86_translate(&ram.gm, &pg, va, &pa, &end);
	if (ret == 0) {
		x86_translate(&ram.gm, &pg, end, &pa, NULL); /* the next page */
		x86_translate(&ram.gm, &pg, end - 1, &pa, NULL);
	}
	x86_read_virt(&ram.gm, &pg, va, buf, len);
	/* Straddling the end of the page, and of the address space. */
	x86_read_virt(&ram.gm, &pg, (va | 0xfff) - 3, buf, 8);
	x86_read_virt(&ram.gm, &pg, UINT64_MAX - 3, buf, 8);
	return ret;
}

/* ---- expectations ----------------------------------------------------- */

/* A small trace to evaluate expectations on, made once: the test
 * kernels' ct_* functions, a handoff mark, drops, and a TSC frequency. */
static const char *expect_trace(void)
{
	static const char *const names[] = { "ct_root", "ct_branch", "ct_leaf", "ct_fib",
					     "start_kernel", "__warn" };
	static char path[64];
	static bool made;
	struct symbol syms[sizeof(names) / sizeof(names[0])];
	struct symtab tab = { syms, sizeof(names) / sizeof(names[0]) };
	struct trace_meta meta = { .kernel_path = "fuzz.elf", .tsc_khz = 1000000,
				   .mode = "breakpoint" };
	struct trace_writer *w;
	int fd;

	if (made)
		return path;
	fd = memfd_create("earlytrace-fuzz-trace", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (size_t i = 0; i < tab.nr; i++)
		syms[i] = (struct symbol){ .addr = 0xffffffff81000000ull + 0x100 * i, .size = 0x40,
					   .name = names[i], .type = 'T' };
	if (trace_writer_open(&w, path, &meta) || trace_writer_symbols(w, &tab))
		return NULL;
	for (unsigned i = 0; i < 64; i++) {
		struct et_ring_record ev = {
			.tsc = 1000 * (i + 1),
			.ip = syms[i < 2 ? i : 2 + i % 2].addr,
			.parent_ip = syms[0].addr + 5,
			.kind = ET_REC_CALL,
			.flags = ET_REC_SRC_BREAKPOINT,
		};

		trace_writer_events(w, &ev, 1);
		if (i == 32)
			trace_writer_mark(w, ev.tsc, "handoff: ftrace_init reached, 4 sites restored");
	}
	trace_writer_drops(w, 2, 70000, "host buffer full (--overflow stop)");
	if (trace_writer_close(w, 66, 2, "debug-exit port"))
		return NULL;
	made = true;
	return path;
}

static void expect_warn(void *ctx, const struct expect_list *l, const struct expect *e,
			const char *func, const char *why)
{
	(void)ctx, (void)l, (void)e, (void)func, (void)why;
}

int fuzz_expect(const uint8_t *data, size_t size)
{
	static const char *const filters[] = { "ct_*", "start_kernel" }, *const notrace[] = { "ct_fib" };
	struct expect_list l;
	struct expect_outcome *out;
	struct trace_reader *r;
	const char *path = fuzz_as_file(data, size), *trace = expect_trace();

	if (!path || expect_parse_file(&l, path))
		return -1;
	expect_check_filters(&l, filters, 2, notrace, 1, expect_warn, NULL);
	out = calloc(l.nr, sizeof(*out));
	if (out && trace && trace_reader_open(&r, trace) == 0) {
		struct expect_facts facts;

		expect_evaluate(&l, r, out, &facts);
		trace_reader_close(r);
	}
	free(out);
	expect_list_free(&l);
	return 0;
}

/* ---- a panic's message ------------------------------------------------ */

/* Guest RAM for the strings %s reads: small, so the fuzzer finds it. */
#define FUZZ_PANIC_RAM (4u << 10)

static int panic_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	const struct x86_paging paging_off = { 0 };

	return x86_read_virt(ctx, &paging_off, va, buf, len);
}

int fuzz_panic_message(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct fuzz_ram ram;
	uint64_t words[PANIC_ARGS_MAX];
	char fmt[PANIC_FORMAT_MAX + 1], out[PANIC_MESSAGE_MAX];
	uint8_t mode = in_u8(&in);
	unsigned nr = mode % (PANIC_ARGS_MAX + 1), word_bytes = mode & 0x80 ? 4 : 8;
	size_t fmt_len = in_le(&in, 2) % (PANIC_FORMAT_MAX + 1), body_len;
	const uint8_t *p;
	struct panic_args a;

	for (unsigned i = 0; i < nr; i++)
		words[i] = in_le(&in, word_bytes);
	p = in_bytes(&in, &fmt_len);
	if (fmt_len) /* p is NULL on an exhausted input */
		memcpy(fmt, p, fmt_len);
	fmt[fmt_len] = '\0';
	body_len = in.n;
	p = in_bytes(&in, &body_len);
	if (ram_init(&ram, FUZZ_PANIC_RAM, 0, true))
		return -1;
	if (body_len)
		memcpy(ram.low, p, body_len < FUZZ_PANIC_RAM ? body_len : FUZZ_PANIC_RAM);
	a = (struct panic_args){ words, nr, word_bytes, panic_read, &ram.gm, NULL, NULL };
	panic_message_format(fmt, &a, out, sizeof(out));
	/* The message is terminated inside its buffer, printable only. */
	if (!memchr(out, '\0', sizeof(out)))
		abort();
	for (size_t i = 0; out[i]; i++)
		if (out[i] < 0x20 || out[i] > 0x7e)
			abort();
	return 0;
}

/* ---- the table -------------------------------------------------------- */

const struct fuzz_target fuzz_targets[] = {
	{ "elf", fuzz_elf },
	{ "bzimage", fuzz_bzimage },
	{ "system_map", fuzz_system_map },
	{ "kallsyms", fuzz_kallsyms },
	{ "trace_reader", fuzz_trace_reader },
	{ "hypercall", fuzz_hypercall },
	{ "tramp_drain", fuzz_tramp_drain },
	{ "page_walk", fuzz_page_walk },
	{ "expect", fuzz_expect },
	{ "ftrace_page", fuzz_ftrace_page },
	{ "ftrace_ring", fuzz_ftrace_ring },
	{ "panic_message", fuzz_panic_message },
	{ "domain_xml", fuzz_domain_xml },
	{ "tracedat_readback", fuzz_tracedat_readback },
	{ NULL, NULL },
};

const struct fuzz_target *fuzz_target_find(const char *name)
{
	for (const struct fuzz_target *t = fuzz_targets; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}
