/* SPDX-License-Identifier: MIT */
/*
 * Host-side cost of one breakpoint exit, user-space part only: what the
 * VMM does between KVM_RUN returning at a site's int3 and the next
 * KVM_RUN (vmm/trace/tracer.c on_int3 and record_call), piece by piece,
 * with the same library code, on a real vCPU and a 4-level page-table
 * walk over guest memory laid out like a kernel's. A null system call and
 * a bare KVM_GET_REGS, measured in the same run, give the scale.
 *
 * Side by side, the previous design's two system calls per exit, timed in
 * the same run: the guest TSC read with KVM_GET_MSRS, and each event's
 * record handed to the file with one write() (the previous writer's
 * path: the record assembled with its CRC, then written). Now: the TSC
 * is RDTSC plus KVM's offset (vcpu_guest_tsc()) and the record is stored
 * in the file's mapping (trace_writer_events()).
 *
 *   host_costs [ITERATIONS] [SITES]      (defaults 200000, 37121)
 *
 * Built and run by bench/performance.sh; prints "name previous_ns now_ns"
 * lines ("-" where the design has no such part).
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <zlib.h>
#include <unistd.h>

#include "arch/x86/page_walk.h"
#include "vmm/mem/guest_mem.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/trace/host_buffer.h"
#include "vmm/trace/site_patch.h"
#include "vmm/tracefile/trace_file.h"

#define MSR_IA32_TSC 0x10
#define PTE_P 1ull
#define PTE_W 2ull
#define PTE_PS 0x80ull

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Maps the 1 GiB at 0xffffffff80000000 to physical 0 with 2 MiB pages, as
 * Linux's early tables do: PML4 at 0x1000, PDPT 0x2000, PD 0x3000. */
static void build_tables(struct guest_mem *gm)
{
	uint64_t *pml4 = guest_mem_ptr(gm, 0x1000, 4096), *pdpt = guest_mem_ptr(gm, 0x2000, 4096),
		 *pd = guest_mem_ptr(gm, 0x3000, 4096);

	pml4[511] = 0x2000 | PTE_P | PTE_W;
	pdpt[510] = 0x3000 | PTE_P | PTE_W;
	for (int i = 0; i < 512; i++)
		pd[i] = ((uint64_t)i << 21) | PTE_P | PTE_W | PTE_PS;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 200000;
	size_t nr_sites = argc > 2 ? (size_t)atol(argv[2]) : 37121;
	int kvm = open("/dev/kvm", O_RDWR), vm, vcpu;
	struct guest_mem gm;
	struct site_patches sp = { 0 };
	struct host_buffer buf;
	struct trace_writer *w;
	struct trace_meta meta = { .kernel_path = "bench", .symbol_source = "none", .mode = "breakpoint" };
	struct arch_paging pg = { .cr0 = 0x80050033, .cr3 = 0x1000, .cr4 = 0x20, .efer = 0x500 };
	char path[] = "/tmp/earlytrace-host-costs-XXXXXX";
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} msrs = { .hdr.nmsrs = 1, .e.index = MSR_IA32_TSC };
	double t, t_syscall, t_getregs, t_ioctls, t_nosync, t_walk, t_find, t_buffer, t_file;
	double t_tsc, t_write, prev, now;
	struct vcpu v = { .fd = -1 };
	int old_fd;
	char old_path[] = "/tmp/earlytrace-host-costs-old-XXXXXX";
	volatile uint64_t sink = 0;
	int fd;

	if (kvm < 0 || (vm = ioctl(kvm, KVM_CREATE_VM, 0)) < 0 ||
	    (vcpu = ioctl(vm, KVM_CREATE_VCPU, 0)) < 0) {
		perror("host_costs: KVM");
		return 1;
	}
	if (guest_mem_init(&gm, 64 << 20) || host_buffer_init(&buf, (size_t)iters, OVERFLOW_STOP))
		return 1;
	build_tables(&gm);
	sp.sites = calloc(nr_sites, sizeof(*sp.sites));
	for (size_t i = 0; i < nr_sites; i++) {
		sp.sites[i].paddr = 0x1000000 + i * 64;
		sp.sites[i].vaddr = 0xffffffff81000000ull + i * 64;
		sp.sites[i].armed = true;
	}
	sp.nr = nr_sites;
	fd = mkstemp(path);
	if (fd < 0 || trace_writer_open(&w, path, &meta))
		return 1;
	close(fd);
	old_fd = mkstemp(old_path);
	if (old_fd < 0)
		return 1;
	v.fd = vcpu;

	t = now_ns();
	for (long i = 0; i < iters; i++)
		sink += (uint64_t)syscall(SYS_getppid);
	t_syscall = (now_ns() - t) / iters;

	t = now_ns();
	for (long i = 0; i < iters; i++)
		ioctl(vcpu, KVM_GET_REGS, &regs);
	t_getregs = (now_ns() - t) / iters;

	/* The ioctls of one breakpoint exit. With KVM_CAP_SYNC_REGS (what the
	 * VMM uses when the KVM has it) registers come in the run structure
	 * and only the guest TSC is an ioctl; without it GET_REGS, GET_SREGS,
	 * the TSC and SET_REGS to resume after the site. */
	t = now_ns();
	for (long i = 0; i < iters; i++)
		ioctl(vcpu, KVM_GET_MSRS, &msrs);
	t_ioctls = (now_ns() - t) / iters;
	t = now_ns();
	for (long i = 0; i < iters; i++) {
		ioctl(vcpu, KVM_GET_REGS, &regs);
		ioctl(vcpu, KVM_GET_SREGS, &sregs);
		ioctl(vcpu, KVM_GET_MSRS, &msrs);
		ioctl(vcpu, KVM_SET_REGS, &regs);
	}
	t_nosync = (now_ns() - t) / iters;

	/* rip to physical, and the parent ip read at rsp. */
	t = now_ns();
	for (long i = 0; i < iters; i++) {
		uint64_t pa, v;

		arch_translate(&gm, &pg, 0xffffffff81000000ull + (uint64_t)(i % nr_sites) * 64, &pa, NULL);
		arch_read_virt(&gm, &pg, 0xffffffff80800000ull - 8 * (i % 64), &v, 8);
		sink += pa + v;
	}
	t_walk = (now_ns() - t) / iters;

	t = now_ns();
	for (long i = 0; i < iters; i++)
		sink += (uintptr_t)site_patches_find(&sp, 0x1000000 + (uint64_t)(i * 7919 % (long)nr_sites) * 64);
	t_find = (now_ns() - t) / iters;

	t = now_ns();
	for (long i = 0; i < iters; i++) {
		struct et_ring_record ev = { .tsc = (uint64_t)i, .ip = 1, .parent_ip = 2, .kind = 1, .flags = 1 };

		host_buffer_add(&buf, &ev);
	}
	t_buffer = (now_ns() - t) / iters;

	/* The guest TSC now: RDTSC plus KVM's offset where KVM says it. */
	vcpu_guest_tsc(&v);
	t = now_ns();
	for (long i = 0; i < iters; i++)
		sink += vcpu_guest_tsc(&v);
	t_tsc = (now_ns() - t) / iters;

	/* The previous writer: each record assembled with its CRC and handed
	 * to the kernel in one write() (44 bytes: header, event, CRC). */
	t = now_ns();
	for (long i = 0; i < iters; i++) {
		struct et_ring_record ev = { .tsc = (uint64_t)i, .ip = 1, .parent_ip = 2, .kind = 1, .flags = 1 };
		uint8_t rec[8 + sizeof(ev) + 4];
		uint32_t hdr[2] = { TRACE_REC_EVENTS, sizeof(ev) }, crc;

		memcpy(rec, hdr, 8);
		memcpy(rec + 8, &ev, sizeof(ev));
		crc = (uint32_t)crc32(0L, rec, 8 + sizeof(ev));
		memcpy(rec + 8 + sizeof(ev), &crc, 4);
		sink += (uint64_t)write(old_fd, rec, sizeof(rec));
	}
	t_write = (now_ns() - t) / iters;
	close(old_fd);
	unlink(old_path);

	/* Stop mode streams each kept event to the file at once: through
	 * the file's mapping. */
	t = now_ns();
	for (long i = 0; i < iters; i++) {
		struct et_ring_record ev = { .tsc = (uint64_t)i, .ip = 1, .parent_ip = 2, .kind = 1, .flags = 1 };

		trace_writer_events(w, &ev, 1);
	}
	t_file = (now_ns() - t) / iters;

	trace_writer_close(w, (uint64_t)iters, 0, "bench");
	unlink(path);
	/* The user-space work of one exit (and, before, its two system
	 * calls: the TSC ioctl and the write). */
	prev = t_ioctls + t_walk + t_find + t_buffer + t_write;
	now = (vcpu_guest_tsc_is_free(&v) ? t_tsc : t_ioctls) + t_walk + t_find + t_buffer + t_file;
	printf("null_syscall_ns %.0f %.0f\n", t_syscall, t_syscall);
	printf("kvm_get_regs_ns %.0f %.0f\n", t_getregs, t_getregs);
	printf("exit_ioctls_without_sync_regs_ns %.0f -\n", t_nosync);
	printf("guest_tsc_ns %.0f %.0f\n", t_ioctls, vcpu_guest_tsc_is_free(&v) ? t_tsc : t_ioctls);
	printf("page_walks_ns %.0f %.0f\n", t_walk, t_walk);
	printf("site_lookup_ns %.0f %.0f\n", t_find, t_find);
	printf("host_buffer_ns %.0f %.0f\n", t_buffer, t_buffer);
	printf("trace_file_ns %.0f %.0f\n", t_write, t_file);
	printf("total_per_exit_ns %.0f %.0f\n", prev, now);
	printf("system_calls_per_exit_besides_kvm_run 2 %d\n", vcpu_guest_tsc_is_free(&v) ? 0 : 1);
	return sink == 42; /* keeps the loops */
}
