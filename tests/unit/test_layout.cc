// SPDX-License-Identifier: MIT
// The layering of the host program's folders (docs/architecture.md,
// "Layers"), held by scripts/folder-graph.sh: no folder includes another
// that includes it back, only vmm/kvm/ calls ioctl(), and no x86 header or
// x86 name appears in vmm/ (x86 lives in arch/).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/fixtures.h"

namespace {

const std::string kScript = std::string(ET_TEST_SRCDIR) + "/../scripts/folder-graph.sh";

// The script's output and exit status.
int run_script(const std::string &args, std::string &out)
{
	std::string cmd = "bash " + kScript + " " + args + " 2>&1";
	FILE *p = popen(cmd.c_str(), "r");
	char buf[4096];
	size_t n;

	out.clear();
	if (!p)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	int status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void write_file(const std::string &path, const std::string &text)
{
	std::ofstream(path) << text;
}

} // namespace

TEST(Layout, NoFolderIncludesOneThatIncludesItBackAndOnlyVmmKvmCallsIoctl)
{
	std::string out;

	EXPECT_EQ(run_script("", out), 0) << out;
	EXPECT_NE(out.find("\nno circles\n"), std::string::npos) << out;
	EXPECT_NE(out.find("\nno ioctl outside vmm/kvm\n"), std::string::npos) << out;
}

TEST(Layout, NoX86HeaderOrX86NameOutsideArch)
{
	std::string out;

	EXPECT_EQ(run_script("", out), 0) << out;
	EXPECT_NE(out.find("\nno x86 header outside arch/\n"), std::string::npos) << out;
	EXPECT_NE(out.find("\narch_ioctl.h only in vmm/kvm and arch/*/kvm\n"), std::string::npos)
		<< out;
	EXPECT_NE(out.find("\nno x86 name outside arch/\n"), std::string::npos) << out;
}

// The check can fail: a tree with a circle and a stray ioctl is refused,
// each named.
TEST(Layout, ACircleAndAnIoctlOutsideVmmKvmAreNamed)
{
	TempDir dir;
	std::string out;

	ASSERT_EQ(system(("mkdir -p " + dir.path + "/vmm/a " + dir.path + "/vmm/b " +
			  dir.path + "/vmm/kvm")
				 .c_str()),
		  0);
	write_file(dir.path + "/vmm/a/a.h", "#include \"vmm/b/b.h\"\n");
	write_file(dir.path + "/vmm/b/b.h", "#include \"vmm/a/a.h\"\n");
	write_file(dir.path + "/vmm/b/b.c", "int f(void) { return ioctl(3, 4); }\n");
	write_file(dir.path + "/vmm/kvm/vm.c", "int g(void) { return ioctl(3, 4); }\n");

	EXPECT_EQ(run_script("--root " + dir.path, out), 1) << out;
	EXPECT_NE(out.find("circle: "), std::string::npos) << out;
	EXPECT_NE(out.find("vmm/a"), std::string::npos) << out;
	EXPECT_NE(out.find("ioctl outside vmm/kvm: vmm/b/b.c:1:"), std::string::npos) << out;
	EXPECT_EQ(out.find("vmm/kvm/vm.c"), std::string::npos) << out;
}

// The x86 checks can fail: an arch/x86/ include in vmm/, vmm/kvm/arch_ioctl.h
// outside the KVM halves, and x86 names in code are named; the same names
// in a comment or a message are not, nor anything in arch/.
TEST(Layout, X86OutsideArchIsNamed)
{
	TempDir dir;
	std::string out;

	ASSERT_EQ(system(("mkdir -p " + dir.path + "/vmm/a " + dir.path + "/vmm/kvm " + dir.path +
			  "/arch/x86/kvm")
				 .c_str()),
		  0);
	write_file(dir.path + "/vmm/a/a.c",
		   "#include \"arch/x86/msr.h\"\n"
		   "#include \"vmm/kvm/arch_ioctl.h\"\n"
		   "/* X86_MSR_IA32_TSC, regs->rip: words in a comment */\n"
		   "static const char *m = \"LAYOUT_ZERO_PAGE in a message\"; // 0xcc\n"
		   "int f(struct kvm_regs *r) { return r->rip == X86_MSR_IA32_TSC; }\n"
		   "int g(void) { return EM_X86_64 + 0xcc; }\n");
	write_file(dir.path + "/vmm/kvm/vcpu.c", "#include \"vmm/kvm/arch_ioctl.h\"\n");
	write_file(dir.path + "/arch/x86/kvm/msr.c",
		   "#include \"vmm/kvm/arch_ioctl.h\"\n"
		   "#include \"arch/x86/msr.h\"\nint h(void) { return X86_MSR_IA32_TSC; }\n");

	EXPECT_EQ(run_script("--root " + dir.path, out), 1) << out;
	EXPECT_NE(out.find("x86 header outside arch/: vmm/a/a.c:1:"), std::string::npos) << out;
	EXPECT_NE(out.find("arch_ioctl.h outside vmm/kvm and arch/*/kvm: vmm/a/a.c:2:"),
		  std::string::npos)
		<< out;
	EXPECT_NE(out.find("x86 name outside arch/: vmm/a/a.c:5:"), std::string::npos) << out;
	EXPECT_NE(out.find("x86 name outside arch/: vmm/a/a.c:6:"), std::string::npos) << out;
	EXPECT_EQ(out.find("vmm/a/a.c:3:"), std::string::npos) << out;
	EXPECT_EQ(out.find("vmm/a/a.c:4:"), std::string::npos) << out;
	EXPECT_EQ(out.find("vmm/kvm/vcpu.c"), std::string::npos) << out;
	EXPECT_EQ(out.find("arch/x86/kvm/msr.c"), std::string::npos) << out;
}
