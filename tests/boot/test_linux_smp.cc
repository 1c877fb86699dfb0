// SPDX-License-Identifier: MIT
// The Debian cloud kernel with two vCPUs under trace: it brings up its
// second CPU (INIT-SIPI-SIPI from the MADT earlytrace writes) and says so.
// Minutes on kvm-pvm (about 5 of wall time: docs/linux.md, "Application
// processors on kvm-pvm"): there only with EARLYTRACE_SLOW_TESTS=1.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

TEST(LinuxBoot, DebianBringsUpItsSecondCpuUnderTrace)
{
	REQUIRE_KVM();
	std::string vmlinuz = debian_kernel_dir() + "/vmlinuz";
	if (!file_exists(vmlinuz))
		GTEST_SKIP() << vmlinuz << " is missing: run images/fetch-debian-kernel.sh";
	if (std::string why = stock_boot_skip_reason("a stock-kernel boot to smp_init"); !why.empty())
		GTEST_SKIP() << why;
	std::string path = temp_path("linux-smp.trace");
	VmmRun run;
	// Traced until the handoff at ftrace_init (before the APs start);
	// --until's hardware breakpoint then ends the run right after
	// smp_init(), at sched_init_smp.
	run.args = { "trace", "--kernel", vmlinuz, "--mem", "256M", "--cpus", "2", "--append",
		     "console=ttyS0 panic=-1 reboot=k tsc=reliable no_timer_check nowatchdog "
		     "nosoftlockup mitigations=off audit=0 cryptomgr.notests "
		     "rcupdate.rcu_expedited=1 8250.nr_uarts=1 pci=off init_on_alloc=0 rodata=off",
		     "-f", "start_kernel", "-f", "smp_*", "--until", "sched_init_smp", "-o", path,
		     "--timeout", "1500" };
	run.harness_timeout_s = 1560;
	VmmResult r = run_vmm(run);
	std::string tail = r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	EXPECT_EQ(r.status, 0) << r.err << tail;
	EXPECT_NE(r.out.find("smpboot: Allowing 2 CPUs"), std::string::npos) << tail;
	EXPECT_NE(r.out.find("smp: Brought up 1 node, 2 CPUs"), std::string::npos) << r.err << tail;
	EXPECT_EQ(r.err.find("guest stopped"), std::string::npos) << r.err;
	TraceFile t = load_trace(path);
	ASSERT_EQ(t.error, "");
	EXPECT_EQ(t.count["start_kernel"], 1) << "the early phase was traced on vCPU 0";
	unlink(path.c_str());
}
