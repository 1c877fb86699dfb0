/* SPDX-License-Identifier: MIT */
/*
 * Where the VMM's start time goes: the pieces between exec and the first
 * KVM_RUN, each timed on its own, so the start table in
 * docs/performance.md can say which part is earlytrace's and which is
 * KVM's on the host at hand.
 *
 *   start_costs EARLYTRACE [ITERATIONS]      (default 40)
 *
 * - exec of a program that links only the C library (/bin/true), and of
 *   `earlytrace --version` (exec, loading and relocating its libraries,
 *   main and exit): the difference is earlytrace's own start-up cost;
 * - the KVM ioctls earlytrace makes to build a machine, in its order
 *   (vmm/kvm/vm.c, vmm/kvm/vcpu.c), with 16 MiB of guest RAM as the start
 *   benchmark uses, and closing the VM (its teardown).
 *
 * Built and run by bench/performance.sh; prints "name ns" lines (medians).
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RAM (16u << 20)
#define MAX_ITERS 1000

extern char **environ;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One exec of argv to its exit, output discarded; -1 on failure. */
static double spawn_ns(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	double t = now_ns();
	int status;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) ||
	    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	return now_ns() - t;
}

enum piece { CREATE_VM, IRQCHIP_PIT, MEMORY, VCPU, CLOSE, NR_PIECES };
static const char *const piece_names[NR_PIECES] = {
	"kvm_create_vm_ns", "kvm_irqchip_and_pit_ns", "kvm_set_user_memory_region_16M_ns",
	"kvm_create_vcpu_and_cpuid_ns", "kvm_vm_teardown_ns",
};

/* One machine built and torn down as earlytrace does; the time of each
 * piece into t. 0, or -1 when KVM refuses. */
static int build_machine(int kvm, void *ram, double t[NR_PIECES])
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	struct kvm_userspace_memory_region slot = {
		.memory_size = RAM, .userspace_addr = (uintptr_t)ram,
	};
	static struct {
		struct kvm_cpuid2 hdr;
		struct kvm_cpuid_entry2 e[256];
	} cpuid;
	uint64_t identity = 0xfffbc000;
	double t0;
	int vm, vcpu;

	t0 = now_ns();
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return -1;
	t[CREATE_VM] = now_ns() - t0;

	t0 = now_ns();
	/* The identity map address is optional (vmm/kvm/vm.c ignores refusals). */
	ioctl(vm, KVM_SET_IDENTITY_MAP_ADDR, &identity);
	if (ioctl(vm, KVM_SET_TSS_ADDR, 0xfffbd000ul) || ioctl(vm, KVM_CREATE_IRQCHIP, 0) ||
	    ioctl(vm, KVM_CREATE_PIT2, &pit))
		return close(vm), -1;
	t[IRQCHIP_PIT] = now_ns() - t0;

	t0 = now_ns();
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &slot))
		return close(vm), -1;
	t[MEMORY] = now_ns() - t0;

	t0 = now_ns();
	cpuid.hdr.nent = 256;
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0 || ioctl(kvm, KVM_GET_SUPPORTED_CPUID, &cpuid) ||
	    ioctl(vcpu, KVM_SET_CPUID2, &cpuid))
		return close(vm), -1;
	t[VCPU] = now_ns() - t0;

	t0 = now_ns();
	close(vcpu);
	close(vm);
	t[CLOSE] = now_ns() - t0;
	return 0;
}

int main(int argc, char **argv)
{
	static double samples[NR_PIECES + 2][MAX_ITERS];
	int iters = argc > 2 ? atoi(argv[2]) : 40;
	char *true_argv[] = { "/bin/true", NULL };
	char *et_argv[] = { argc > 1 ? argv[1] : NULL, "--version", NULL };
	int kvm = open("/dev/kvm", O_RDWR);
	void *ram;

	if (argc < 2 || iters < 1 || iters > MAX_ITERS) {
		fprintf(stderr, "usage: start_costs EARLYTRACE [ITERATIONS 1-%d]\n", MAX_ITERS);
		return 2;
	}
	ram = mmap(NULL, RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (kvm < 0 || ram == MAP_FAILED) {
		perror("start_costs: /dev/kvm");
		return 1;
	}
	for (int i = 0; i < iters; i++) {
		double t[NR_PIECES];

		samples[NR_PIECES][i] = spawn_ns(true_argv);
		samples[NR_PIECES + 1][i] = spawn_ns(et_argv);
		if (samples[NR_PIECES][i] < 0 || samples[NR_PIECES + 1][i] < 0) {
			fprintf(stderr, "start_costs: cannot run /bin/true or %s --version\n", argv[1]);
			return 1;
		}
		if (build_machine(kvm, ram, t)) {
			perror("start_costs: KVM");
			return 1;
		}
		for (int p = 0; p < NR_PIECES; p++)
			samples[p][i] = t[p];
	}
	printf("exec_libc_only_program_ns %.0f\n", median(samples[NR_PIECES], iters));
	printf("exec_earlytrace_version_ns %.0f\n", median(samples[NR_PIECES + 1], iters));
	for (int p = 0; p < NR_PIECES; p++)
		printf("%s %.0f\n", piece_names[p], median(samples[p], iters));
	return 0;
}
