// SPDX-License-Identifier: MIT
// A real, stock distribution kernel: Debian 12's cloud kernel (a bzImage
// with an LZ4 payload) boots to a busybox userspace. Under nested,
// emulating KVMs this takes minutes; the timeouts are generous for that.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <string>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/tracefile/trace_file.h"

namespace {

const double kBootTimeout = 1200; // seconds, for the slowest (nested) hosts

struct LinuxFixture {
	std::string vmlinuz, initramfs;
	std::string skip_reason;
};

LinuxFixture linux_fixture()
{
	LinuxFixture f;
	f.vmlinuz = debian_kernel_dir() + "/vmlinuz";
	f.initramfs = initramfs_path();
	if (!file_exists(f.vmlinuz))
		f.skip_reason = f.vmlinuz + " is missing: run images/fetch-debian-kernel.sh";
	else if (!file_exists(f.initramfs))
		f.skip_reason = f.initramfs + " is missing: run images/make-initramfs.sh";
	return f;
}

VmmResult boot_linux(const LinuxFixture &f, const std::string &extra_append)
{
	VmmRun run;
	run.args = { "run", "--kernel", f.vmlinuz, "--initrd", f.initramfs, "--mem", "256M",
		     "--append", "console=ttyS0 panic=-1 reboot=k " + extra_append, "--timeout",
		     std::to_string((int)kBootTimeout) };
	run.harness_timeout_s = kBootTimeout + 60;
	return run_vmm(run);
}

} // namespace

// The full boot to userspace: seconds on real VMX/SVM and tens of seconds
// in the nested test VM; on kvm-pvm (minutes) only with
// EARLYTRACE_SLOW_TESTS=1 (stock_boot_skip_reason()).
TEST(LinuxBoot, DebianCloudKernelReachesInitAndRebootsCleanly)
{
	REQUIRE_KVM();
	LinuxFixture f = linux_fixture();
	if (!f.skip_reason.empty())
		GTEST_SKIP() << f.skip_reason;
	if (std::string why = stock_boot_skip_reason("a full stock-kernel boot"); !why.empty())
		GTEST_SKIP() << why;
	VmmResult r = boot_linux(f, "et_init=reboot");
	EXPECT_EQ(r.status, 0) << r.err << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	EXPECT_TRUE(std::regex_search(r.out, std::regex("Linux version 6\\.[0-9]+\\.[0-9]+-[0-9]+-cloud-amd64")))
		<< r.out.substr(0, 2000);
	// The boot log shows our platform: PVH entry, the E820 map we gave.
	EXPECT_NE(r.out.find("BIOS-e820: [mem 0x0000000000100000-0x000000000fffffff] usable"),
		  std::string::npos);
	EXPECT_NE(r.out.find("EARLYTRACE-INIT-MARKER: userspace reached"), std::string::npos)
		<< r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	EXPECT_NE(r.out.find("reboot: Restarting system"), std::string::npos);
	EXPECT_EQ(r.err.find("guest stopped"), std::string::npos) << r.err;
}

// A second boot, which panics from user space (stock_boot_skip_reason()).
TEST(LinuxBoot, KernelPanicEndsWithStatus3)
{
	REQUIRE_KVM();
	LinuxFixture f = linux_fixture();
	if (!f.skip_reason.empty())
		GTEST_SKIP() << f.skip_reason;
	if (std::string why = stock_boot_skip_reason("a second stock-kernel boot"); !why.empty())
		GTEST_SKIP() << why;
	// The initramfs crashes the kernel through sysrq; panic=-1 then reboots,
	// which without the breakpoint on panic() would look like success.
	VmmResult r = boot_linux(f, "et_init=panic");
	EXPECT_EQ(r.status, 3) << r.err << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	EXPECT_NE(r.out.find("Kernel panic - not syncing"), std::string::npos);
	EXPECT_NE(r.err.find("the guest kernel panicked"), std::string::npos) << r.err;
}

// A stock kernel that panics without any userspace: the kernel alone,
// with a command line and earlytrace options. Skips as the slow tests do.
namespace {

std::string kernel_only_skip_reason(const LinuxFixture &f)
{
	if (!file_exists(f.vmlinuz))
		return f.vmlinuz + " is missing: run images/fetch-debian-kernel.sh";
	if (std::string why = stock_boot_skip_reason("a stock-kernel boot to a panic"); !why.empty())
		return why;
	return "";
}

VmmResult boot_to_panic(const LinuxFixture &f, const char *mem, const std::string &append,
			std::vector<std::string> extra)
{
	VmmRun run;
	run.args = { "run", "--kernel", f.vmlinuz, "--mem", mem, "--append", append, "--timeout",
		     std::to_string((int)kBootTimeout) };
	run.args.insert(run.args.end(), extra.begin(), extra.end());
	run.harness_timeout_s = kBootTimeout + 60;
	return run_vmm(run);
}

std::string tail_of(const std::string &s)
{
	return s.substr(s.size() > 3000 ? s.size() - 3000 : 0);
}

// The message earlytrace read from panic()'s arguments must be the one
// the kernel printed itself.
// With 68M and no initramfs the kernel runs out of memory in its
// initcalls ("System is deadlocked on memory"), or, when its reclaim keeps
// up (timing: it varies under emulation), gets as far as the root mount.
const std::vector<std::string> kPanicsIn68M = { "System is deadlocked on memory",
						"VFS: Unable to mount root fs" };

void expect_panic_message_as_printed(const VmmResult &r, std::vector<std::string> expected_starts)
{
	std::smatch m;
	ASSERT_TRUE(std::regex_search(r.err, m, std::regex("the guest kernel panicked: \"([^\"]+)\"")))
		<< r.err;
	EXPECT_NE(r.out.find("Kernel panic - not syncing: " + m[1].str()), std::string::npos)
		<< m[1] << "\n" << tail_of(r.out);
	bool known = false;
	for (const std::string &start : expected_starts)
		known |= m[1].str().rfind(start, 0) == 0;
	EXPECT_TRUE(known) << m[1];
	EXPECT_EQ(r.err.find("KVM internal error"), std::string::npos) << r.err;
	EXPECT_EQ(r.err.find("guest stopped"), std::string::npos) << r.err;
}

class LinuxPanic : public ::testing::TestWithParam<const char *> {};
INSTANTIATE_TEST_SUITE_P(Timeouts, LinuxPanic, ::testing::Values("-1", "0", "5"),
			 [](const auto &p) {
				 return std::string(p.param[0] == '-' ? "minus" : "") +
					(p.param[0] == '-' ? p.param + 1 : p.param);
			 });

struct RebootMethod {
	const char *option;
	const char *path;
};
class LinuxReboot : public ::testing::TestWithParam<RebootMethod> {};
INSTANTIATE_TEST_SUITE_P(Methods, LinuxReboot,
			 ::testing::Values(RebootMethod{ "b", "BIOS reset vector" },
					   RebootMethod{ "a", "reset control register 0xcf9" },
					   RebootMethod{ "k", "i8042 reset line" },
					   RebootMethod{ "t", "triple fault on an empty IDT" }),
			 [](const auto &p) { return std::string(p.param.option); });

} // namespace

// --mem 68M is too little for the kernel's initcalls: it panics with
// "System is deadlocked on memory" without an initramfs. Whatever panic=
// says (reboot at once, never, after 5 s), the run ends with status 3 once
// the panic output is out.
TEST_P(LinuxPanic, EndsOnceThePanicOutputIsOut)
{
	REQUIRE_KVM();
	LinuxFixture f = linux_fixture();
	std::string skip = kernel_only_skip_reason(f);
	if (!skip.empty())
		GTEST_SKIP() << skip;
	VmmResult r = boot_to_panic(f, "68M", std::string("console=ttyS0 panic=") + GetParam(), {});
	EXPECT_EQ(r.status, 3) << r.err << tail_of(r.out);
	expect_panic_message_as_printed(r, kPanicsIn68M);
	EXPECT_NE(r.err.find("; the run ends after its panic output (--on-panic exit)"),
		  std::string::npos) << r.err;
	if (std::string(GetParam()) == "0") {
		EXPECT_NE(r.out.find("---[ end Kernel panic - not syncing: "), std::string::npos);
	}
	if (std::string(GetParam()) == "5") {
		EXPECT_NE(r.out.find("Rebooting in 5 seconds.."), std::string::npos);
	}
}

// With --on-panic continue the guest reboots after its panic (panic=-1),
// by the method reboot= names: each must reset the machine cleanly.
TEST_P(LinuxReboot, EachMethodResetsTheMachine)
{
	REQUIRE_KVM();
	LinuxFixture f = linux_fixture();
	std::string skip = kernel_only_skip_reason(f);
	if (!skip.empty())
		GTEST_SKIP() << skip;
	VmmResult r = boot_to_panic(f, "68M",
				    std::string("console=ttyS0 panic=-1 reboot=") + GetParam().option,
				    { "--on-panic", "continue" });
	EXPECT_EQ(r.status, 3) << r.err << tail_of(r.out);
	expect_panic_message_as_printed(r, kPanicsIn68M);
	// reboot=t where the KVM resets the vCPU at a triple fault: fixtures.h.
	std::string path = GetParam().option == std::string("t") && !kvm_shutdown_keeps_state()
				   ? kTripleFaultStateLost
				   : GetParam().path;
	EXPECT_NE(r.err.find("\"; then guest reset (" + path + ")\n"), std::string::npos) << r.err;
}

// `run` of a kernel with no root device: the VFS panic, and Debian's
// panic timeout of 0 (wait forever), must still end the run. The slowest
// initcalls under emulation are left out (docs/linux.md), which changes
// nothing about the root device.
TEST(LinuxBoot, RunWithoutARootDeviceEndsAfterTheVfsPanic)
{
	REQUIRE_KVM();
	LinuxFixture f = linux_fixture();
	std::string skip = kernel_only_skip_reason(f);
	if (!skip.empty())
		GTEST_SKIP() << skip;
	VmmResult r = boot_to_panic(
		f, "256M",
		"console=ttyS0 tsc=reliable no_timer_check nowatchdog nosoftlockup "
		"mitigations=off audit=0 cryptomgr.notests rcupdate.rcu_expedited=1 "
		"8250.nr_uarts=1 pci=off init_on_alloc=0 rodata=off ipv6.disable=1 "
		"initcall_blacklist=ftrace_check_for_weak_functions,trace_eval_init,"
		"tracer_init_tracefs,blake2s_mod_init,bpf_rstat_kfunc_init,"
		"bpf_key_sig_kfuncs_init,kfunc_init,bpf_prog_test_run_init,"
		"bpf_tcp_ca_kfunc_init,cubictcp_register,tcp_congestion_default",
		{});
	EXPECT_EQ(r.status, 3) << r.err << tail_of(r.out);
	expect_panic_message_as_printed(r, { "VFS: Unable to mount root fs" });
}

// The heart of earlytrace on a stock kernel: every call from the guest's
// first instruction until ftrace_init, where the sites are handed back
// exactly as built. The run goes on to sched_init, just after, so the
// kernel's own ftrace has checked and converted every site by then: it
// would print "ftrace bug" for any site not as it expected (or any of our
// trampoline bytes left in the .text/.rodata gap it later frees). Returns
// the calls as (ip, parent ip), in order.
namespace {

std::vector<std::pair<uint64_t, uint64_t>> trace_early_phase(const LinuxFixture &f,
							     const char *mode)
{
	std::vector<std::pair<uint64_t, uint64_t>> seq;
	std::string out = temp_path(std::string("linux-early-") + mode + ".trace");
	VmmRun run;
	run.args = { "trace", "--kernel", f.vmlinuz, "--mem", "256M", "--append",
		     "console=ttyS0 earlyprintk=ttyS0", "--until", "sched_init", "--mode", mode,
		     "--output", out, "--timeout", std::to_string((int)kBootTimeout) };
	run.harness_timeout_s = kBootTimeout + 60;
	VmmResult r = run_vmm(run);
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.err.find("handoff: ftrace_init"), std::string::npos) << r.err;
	// Linux's ftrace found every site as built and took them over.
	EXPECT_NE(r.out.find("ftrace: allocating"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("ftrace: allocated"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("ftrace bug"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("ftrace faulted"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("ftrace failed"), std::string::npos) << r.out;

	struct trace_reader *reader = nullptr;
	if (trace_reader_open(&reader, out.c_str())) {
		ADD_FAILURE() << et_last_error();
		return seq;
	}
	const struct trace_info *info = trace_reader_info(reader);
	const struct symtab *tab = trace_reader_symtab(reader);
	EXPECT_STREQ(info->mode, std::string(mode) == "int3" ? "breakpoint" : "trampoline");
	EXPECT_NE(std::string(info->symbol_source).find("kallsyms"), std::string::npos);
	EXPECT_GT(info->nr_events, 100000u);
	EXPECT_EQ(info->dropped, 0u);
	EXPECT_NE(std::string(info->last_mark).find("handoff: ftrace_init reached"), std::string::npos);
	if (std::string(mode) == "trampoline") {
		// At most one exit per 32k calls: the batch holds more than that.
		std::smatch m;
		EXPECT_TRUE(std::regex_search(r.err, m, std::regex("(\\d+) records a batch, (\\d+) drains \\((\\d+) asked")))
			<< r.err;
		if (!m.empty()) {
			EXPECT_GE(std::stoul(m[1]), 32768u);
			EXPECT_LE(std::stoul(m[3]), info->nr_events / 32768);
		}
		EXPECT_NE(r.err.find("the gap between .text and .rodata"), std::string::npos) << r.err;
	}

	std::map<std::string, long> calls;
	std::map<std::string, std::string> parent;
	std::string first;
	uint64_t last_tsc = 0;
	bool ordered = true;
	struct trace_record rec;
	while (trace_reader_next(reader, &rec) == 1) {
		for (size_t i = 0; i < rec.nr_events; i++) {
			if (et_rec_kind(&rec.events[i]) != ET_REC_CALL)
				continue; // the calls; VM exits have a test of their own
			const struct symbol *s = symtab_lookup(tab, rec.events[i].ip, nullptr);
			const struct symbol *p = symtab_lookup(tab, rec.events[i].parent_ip, nullptr);
			std::string fn = s ? s->name : "?";
			if (first.empty())
				first = fn;
			calls[fn]++;
			parent[fn] = p ? p->name : "?";
			ordered &= rec.events[i].tsc >= last_tsc;
			last_tsc = rec.events[i].tsc;
			seq.emplace_back(rec.events[i].ip, rec.events[i].parent_ip);
		}
	}
	trace_reader_close(reader);
	// PVH's C entry is the first traced function; start_kernel runs once
	// and calls setup_arch.
	EXPECT_EQ(first, "xen_prepare_pvh");
	EXPECT_EQ(calls["start_kernel"], 1);
	EXPECT_EQ(calls["setup_arch"], 1);
	EXPECT_EQ(parent["setup_arch"], "start_kernel");
	EXPECT_EQ(calls["?"], 0);
	EXPECT_TRUE(ordered);
	remove(out.c_str());
	return seq;
}

} // namespace

// Both ways of seeing calls record the same early phase. The kernel is not
// fully deterministic (its slab freelists are shuffled with TSC-seeded
// randomness once kmem_cache_init runs), so the two runs must agree call
// for call far past start_kernel and setup_arch, and in length to 1%.
TEST(LinuxBoot, DebianEarlyPhaseIsTracedUntilFtraceInitInBothModes)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	LinuxFixture f = linux_fixture();
	if (!f.skip_reason.empty())
		GTEST_SKIP() << f.skip_reason;
	auto bp = trace_early_phase(f, "int3");
	auto tramp = trace_early_phase(f, "trampoline");
	size_t same = 0;
	while (same < bp.size() && same < tramp.size() && bp[same] == tramp[same])
		same++;
	EXPECT_GE(same, 100000u) << "the modes disagree at call " << same;
	double ratio = bp.empty() ? 0 : (double)tramp.size() / (double)bp.size();
	EXPECT_NEAR(ratio, 1.0, 0.01) << bp.size() << " vs " << tramp.size();
}

// VM exits in a stock kernel's timeline: its early console on COM1 is port
// I/O the VMM handles, so the trace holds every byte the kernel wrote, in
// the functions that wrote them. (The PIT and the PIC are emulated inside
// KVM, in-kernel irqchip and PIT, so their ports never reach the VMM; and
// Linux only programs them after sched_init.) The run stops just after
// setup_arch's early printk and early PCI quirks.
TEST(LinuxBoot, DebianEarlyPhaseShowsItsPortIoInTheTimeline)
{
	REQUIRE_KVM();
	LinuxFixture f = linux_fixture();
	if (!f.skip_reason.empty())
		GTEST_SKIP() << f.skip_reason;
	TempDir d;
	std::string out = d.file("linux-exits.trace");
	VmmRun run;
	run.args = { "trace", "--kernel", f.vmlinuz, "--mem", "256M", "--append",
		     "console=ttyS0 earlyprintk=ttyS0", "--until", "e820__memblock_setup",
		     "--output", out, "--timeout", std::to_string((int)kBootTimeout) };
	run.harness_timeout_s = kBootTimeout + 60;
	VmmResult r = run_vmm(run);
	ASSERT_EQ(r.status, 0) << r.err;

	struct trace_reader *reader = nullptr;
	ASSERT_EQ(trace_reader_open(&reader, out.c_str()), 0) << et_last_error();
	const struct symtab *tab = trace_reader_symtab(reader);
	std::string console;
	std::map<std::string, long> by_port_and_function;
	size_t calls = 0, serial_after_calls = 0;
	struct trace_record rec;
	while (trace_reader_next(reader, &rec) == 1) {
		for (size_t i = 0; i < rec.nr_events; i++) {
			const et_ring_record &e = rec.events[i];
			if (!et_rec_is_exit(&e)) {
				calls++;
				continue;
			}
			et_exit x = et_exit_unpack(&e);
			const struct symbol *s = symtab_lookup(tab, e.ip, nullptr);
			char key[96];
			snprintf(key, sizeof(key), "%s %s 0x%llx %s",
				 x.kind == ET_REC_PIO ? "pio" : x.kind == ET_REC_MMIO ? "mmio" : "other",
				 x.write ? "write" : "read",
				 (unsigned long long)x.addr, s ? s->name : "?");
			by_port_and_function[key]++;
			if (x.kind == ET_REC_PIO && x.addr == 0x3f8 && x.write) {
				console += (char)x.value;
				serial_after_calls += calls > 100000;
			}
		}
	}
	trace_reader_close(reader);
	std::string seen;
	for (auto &kv : by_port_and_function)
		seen += kv.first + " x" + std::to_string(kv.second) + "\n";
	// The serial driver's own functions, on the UART's ports: transmit
	// register writes and line-status polls.
	EXPECT_GT(by_port_and_function["pio write 0x3f8 io_serial_out"], 1000) << seen;
	EXPECT_GT(by_port_and_function["pio read 0x3fd io_serial_in"], 1000) << seen;
	// The bytes are the kernel's console, the same the terminal showed
	// (from the banner on: the first writes to 0x3f8 set the baud rate
	// divisor, with DLAB set, and are no characters).
	size_t banner = console.find("Linux version 6.");
	ASSERT_NE(banner, std::string::npos) << console.substr(0, 500);
	EXPECT_NE(r.out.find(console.substr(banner, 200)), std::string::npos) << console.substr(0, 300);
	// Between the calls: the console starts well into setup_arch.
	EXPECT_GT(serial_after_calls, 1000u);
	// Early PCI config access (conf1: 0xcf8 address, 0xcfc data).
	EXPECT_GT(by_port_and_function["pio write 0xcf8 read_pci_config_16"], 0) << seen;
}
