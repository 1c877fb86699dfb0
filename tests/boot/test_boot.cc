// SPDX-License-Identifier: MIT
// Boot tests: the real VMM binary boots the test kernels under KVM and the
// tests read what a user would see: console output and exit status.
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <regex>
#include <string>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

// "calltree phase=P total=N" -> N, or -1.
long calltree_total(const std::string &out, const std::string &phase)
{
	std::smatch m;
	std::regex re("calltree phase=" + phase + " total=([0-9]+)");
	return std::regex_search(out, m, re) ? std::stol(m[1]) : -1;
}

long calltree_calls(const std::string &out, const std::string &phase, const std::string &fn)
{
	std::smatch m;
	std::regex re("calltree phase=" + phase + " fn=" + fn + " calls=([0-9]+)");
	return std::regex_search(out, m, re) ? std::stol(m[1]) : -1;
}

// Expected counts, derived in images/common/calltree.c from its shape.
void expect_calltree(const std::string &out, const std::string &phase)
{
	EXPECT_EQ(calltree_calls(out, phase, "ct_root"), 4) << out;
	EXPECT_EQ(calltree_calls(out, phase, "ct_branch"), 32) << out;
	EXPECT_EQ(calltree_calls(out, phase, "ct_leaf"), 512) << out;
	EXPECT_EQ(calltree_calls(out, phase, "ct_fib"), 268) << out;
	EXPECT_EQ(calltree_total(out, phase), 816) << out;
}

} // namespace

TEST(Boot, X86_64KernelRunsItsCallTreeAndExitsWithItsStatus)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "32M", "--append",
				"exit=7 hello", "--timeout", "60" });
	EXPECT_EQ(r.status, 7) << r.err;
	EXPECT_NE(r.out.find("earlytrace test kernel x86_64 abi 3"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("cmdline: exit=7 hello"), std::string::npos) << r.out;
	expect_calltree(r.out, "longmode");
	EXPECT_NE(r.out.find("done"), std::string::npos);
	EXPECT_EQ(r.err, "");
}

TEST(Boot, I386KernelRunsWithPagingOff)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("i386"), "--mem", "32M", "--timeout", "60" });
	EXPECT_EQ(r.status, 0) << r.err << r.out;
	EXPECT_NE(r.out.find("earlytrace test kernel i386 abi 3"), std::string::npos) << r.out;
	expect_calltree(r.out, "prepaging");
	EXPECT_NE(r.out.find("done"), std::string::npos);
}

TEST(Boot, I386KernelRunsAtItsHigherHalfAlias)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("i386"), "--mem", "32M", "--timeout", "60" });
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	// Nested kvm-pvm refuses 32-bit paging with #GP; the image says so.
	if (r.out.find("paging: unsupported, the CPU refused CR0.PG") != std::string::npos)
		GTEST_SKIP() << "this KVM cannot run 32-bit paging (kvm-pvm)";
	EXPECT_NE(r.out.find("paging: on, alias 0xc0000000"), std::string::npos) << r.out;
	expect_calltree(r.out, "paging");
}

TEST(Boot, X86_64KernelThroughTheLinux64Protocol)
{
	REQUIRE_KVM();
	std::string rd = temp_path("initrd.img");
	{
		std::ofstream f(rd, std::ios::binary);
		f << "LINUX64-INITRD" << std::string(5000, 'y');
	}
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--boot", "linux64", "--mem", "64M",
				"--initrd", rd, "--append", "exit=5 via=zeropage" });
	EXPECT_EQ(r.status, 5) << r.err << r.out;
	EXPECT_NE(r.out.find("boot: linux64"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("cmdline: exit=5 via=zeropage"), std::string::npos) << r.out;
	// The same memory map as under PVH, read from the zero page's E820 table.
	EXPECT_NE(r.out.find("memmap: 3 entries"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("memmap 0x100000 0x3f00000 1"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("modules: 1"), std::string::npos) << r.out;
	EXPECT_TRUE(std::regex_search(r.out, std::regex("module 0x[0-9a-f]+ 0x1396 first=LINUX64-INITRDyy")))
		<< r.out;
	expect_calltree(r.out, "longmode");
	remove(rd.c_str());
}

TEST(Boot, ProtocolChoiceFollowsThePvhNote)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M" });
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("boot: pvh"), std::string::npos) << r.out;

	// Without the note, auto falls back to the 64-bit protocol.
	std::ifstream in(image("x86_64"), std::ios::binary);
	std::string bytes((std::istreambuf_iterator<char>(in)), {});
	for (size_t off = 8; off + 4 <= bytes.size(); off++)
		if (!bytes.compare(off, 4, std::string("Xen\0", 4)) && bytes[off - 4] == 18)
			bytes[off - 4] = 17;
	std::string path = temp_path("nopvh.elf");
	std::ofstream(path, std::ios::binary) << bytes;
	r = run_vmm({ "run", "--kernel", path, "--mem", "16M", "--append", "exit=4" });
	EXPECT_EQ(r.status, 4) << r.err;
	EXPECT_NE(r.out.find("boot: linux64"), std::string::npos) << r.out;
	remove(path.c_str());
}

TEST(Boot, ExitStatusZeroAndMaximum)
{
	REQUIRE_KVM();
	EXPECT_EQ(run_vmm({ "run", "-k", image("x86_64"), "-m", "16M", "-p", "exit=0" }).status, 0);
	EXPECT_EQ(run_vmm({ "run", "-k", image("x86_64"), "-m", "16M", "-p", "exit=255" }).status, 255);
}

TEST(Boot, GuestSeesTheMemoryMapWeGiveIt)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "64M" });
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("memmap: 3 entries"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("memmap 0x0 0x9fc00 1"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("memmap 0x9fc00 0x60400 2"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("memmap 0x100000 0x3f00000 1"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("modules: 0"), std::string::npos);
}

TEST(Boot, InitrdArrivesAsModuleZero)
{
	REQUIRE_KVM();
	std::string rd = temp_path("initrd.img");
	{
		std::ofstream f(rd, std::ios::binary);
		f << "INITRD-MARKER-42" << std::string(10000, 'x');
	}
	VmmResult r = run_vmm({ "run", "--kernel", image("i386"), "--mem", "32M", "--initrd", rd });
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("modules: 1"), std::string::npos) << r.out;
	std::smatch m;
	ASSERT_TRUE(std::regex_search(r.out, m, std::regex("module 0x([0-9a-f]+) 0x([0-9a-f]+) first=INITRD-MARKER-42")))
		<< r.out;
	EXPECT_EQ(std::stoul(m[2], nullptr, 16), 10016u);
	// Page-aligned at the top of RAM.
	unsigned long paddr = std::stoul(m[1], nullptr, 16);
	EXPECT_EQ(paddr % 4096, 0u);
	EXPECT_LE(paddr + 10016, 32ul << 20);
	EXPECT_GT(paddr + 10016 + 4096, 32ul << 20);
	remove(rd.c_str());
}

TEST(Boot, KeyboardControllerResetEndsTheRunCleanly)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--append",
				"reboot=kbd exit=9" });
	EXPECT_EQ(r.status, 0) << r.err << r.out;
	EXPECT_EQ(r.err, "earlytrace: guest reset (i8042 reset line)\n");
}

TEST(Boot, TripleFaultGivesACrashReport)
{
	REQUIRE_KVM();
	for (const char *arch : { "i386", "x86_64" }) {
		VmmResult r = run_vmm({ "run", "--kernel", image(arch), "--mem", "16M", "--append",
					"crash=triple" });
		if (!kvm_shutdown_keeps_state()) {
			// Nothing left to report: the machine resets, as a PC's would.
			EXPECT_EQ(r.status, 0) << arch << r.err;
			EXPECT_EQ(r.err, std::string("earlytrace: guest reset (") +
						 kTripleFaultStateLost + ")\n");
			continue;
		}
		EXPECT_EQ(r.status, 2) << arch << r.err;
		EXPECT_NE(r.err.find("earlytrace: guest stopped: triple fault (KVM_EXIT_SHUTDOWN)"),
			  std::string::npos) << arch << r.err;
		EXPECT_NE(r.err.find("rip="), std::string::npos) << r.err;
		EXPECT_NE(r.err.find("cr0="), std::string::npos) << r.err;
		// The faulting instruction, decoded, with its symbol.
		EXPECT_TRUE(std::regex_search(r.err, std::regex("code: [0-9a-f]{16} <[a-z_0-9]+\\+0x[0-9a-f]+>: ")))
			<< arch << r.err;
	}
}

TEST(Boot, PanicIsReportedHoweverTheGuestEndsAfterIt)
{
	REQUIRE_KVM();
	for (const char *arch : { "i386", "x86_64" }) {
		// panic() here resets the machine, as Linux does with panic=-1:
		// without the breakpoint on panic this would look like a clean reboot.
		VmmResult r = run_vmm({ "run", "--kernel", image(arch), "--mem", "16M", "--append",
					"crash=panic", "--on-panic", "continue" });
		EXPECT_EQ(r.status, 3) << arch << r.err;
		EXPECT_NE(r.out.find("Kernel panic - not syncing: requested on the command line: "
				     "crash=panic, code 42\n"),
			  std::string::npos) << r.out;
		EXPECT_NE(r.err.find("earlytrace: the guest kernel panicked: \"requested on the "
				     "command line: crash=panic, code 42\"; then guest reset (i8042 "
				     "reset line)"),
			  std::string::npos) << r.err;
	}
}

TEST(Boot, TimeoutCutsAHungGuest)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--append",
				"crash=hlt", "--timeout", "2" });
	EXPECT_EQ(r.status, 124) << r.err;
	EXPECT_NE(r.err.find("guest still running after 2 s (--timeout)"), std::string::npos) << r.err;
	EXPECT_NE(r.out.find("earlytrace test kernel"), std::string::npos);
}

TEST(Boot, SigtermStopsTheVmm)
{
	REQUIRE_KVM();
	VmmRun run;
	run.args = { "run", "--kernel", image("x86_64"), "--mem", "16M", "--append", "crash=hlt" };
	run.wait_for = "earlytrace test kernel";
	run.send_signal = SIGTERM;
	run.harness_timeout_s = 30;
	VmmResult r = run_vmm(run);
	EXPECT_FALSE(r.timed_out);
	EXPECT_EQ(r.status, 128 + SIGTERM) << r.err;
	EXPECT_NE(r.err.find("stopped by signal 15"), std::string::npos) << r.err;
}

TEST(Cli, HelpAndVersion)
{
	VmmResult r = run_vmm({ "--help" });
	EXPECT_EQ(r.status, 0);
	EXPECT_NE(r.out.find("Usage: earlytrace COMMAND"), std::string::npos);
	r = run_vmm({ "run", "--help" });
	EXPECT_EQ(r.status, 0);
	EXPECT_NE(r.out.find("--kernel FILE"), std::string::npos);
	r = run_vmm({ "--version" });
	EXPECT_EQ(r.status, 0);
	EXPECT_TRUE(std::regex_search(r.out, std::regex("^earlytrace [0-9]+\\.[0-9]+\\.[0-9]+ \\(guest ABI 3\\)\n$")))
		<< r.out;
	r = run_vmm({ "run", "--cpu", "help" });
	EXPECT_EQ(r.status, 0);
	EXPECT_NE(r.out.find("nested-pvm"), std::string::npos);
	EXPECT_NE(r.out.find("hides cx16"), std::string::npos);
}
