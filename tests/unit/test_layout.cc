// SPDX-License-Identifier: MIT
// The layering of the host program's folders (docs/architecture.md,
// "Layers"), held by scripts/folder-graph.sh: no folder includes another
// that includes it back, and only vmm/kvm/ calls ioctl().
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
