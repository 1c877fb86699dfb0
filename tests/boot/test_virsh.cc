// SPDX-License-Identifier: MIT
// `earlytrace domain-xml`'s definition started the way a user starts it:
// virsh define + start under libvirt and QEMU, COM1 read from the domain's
// console pty, then destroy + undefine. Behind EARLYTRACE_SLOW_TESTS=1,
// since it needs QEMU and a running libvirt daemon (docs/libvirt.md,
// "Starting it under virsh": scripts/install-deps.sh --libvirt and
// scripts/start-libvirtd.sh); without them it skips and says which is
// missing.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

// $EARLYTRACE_LIBVIRT_URI, else qemu:///system (root runs QEMU through
// the system daemon; qemu:///session is the same daemon for root).
std::string uri()
{
	const char *u = getenv("EARLYTRACE_LIBVIRT_URI");
	return u && *u ? u : "qemu:///system";
}

struct Cmd {
	int status;
	std::string out; // stdout and stderr together
};

Cmd sh(const std::string &command)
{
	Cmd c{ -1, "" };
	FILE *p = popen((command + " 2>&1").c_str(), "r");
	if (!p)
		return c;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		c.out.append(buf, n);
	int st = pclose(p);
	c.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return c;
}

Cmd virsh(const std::string &args)
{
	return sh("virsh -q -c '" + uri() + "' " + args);
}

bool on_path(const char *program)
{
	return sh(std::string("command -v ") + program).status == 0;
}

// Why the test cannot run here, or "" when it can.
std::string missing_prerequisite()
{
	if (!getenv("EARLYTRACE_SLOW_TESTS"))
		return "starts QEMU under libvirt; set EARLYTRACE_SLOW_TESTS=1 to run it";
	if (!on_path("virsh") || !on_path("qemu-system-x86_64"))
		return "virsh or qemu-system-x86_64 is not installed "
		       "(bash scripts/install-deps.sh --libvirt)";
	Cmd c = virsh("uri");
	if (c.status != 0)
		return "no libvirt daemon answers on " + uri() +
		       " (bash scripts/start-libvirtd.sh): " + c.out;
	return "";
}

// The domain goes away at the end of the test, whatever happened.
struct DefinedDomain {
	std::string name;
	explicit DefinedDomain(std::string n) : name(std::move(n)) {}
	~DefinedDomain()
	{
		virsh("destroy " + name);
		virsh("undefine " + name);
	}
};

double now_s()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

// What the pty has printed until `until` appears or timeout_s passes.
std::string read_until(int fd, const std::string &until, double timeout_s)
{
	std::string out;
	double end = now_s() + timeout_s;
	while (out.find(until) == std::string::npos && now_s() < end) {
		pollfd p{ fd, POLLIN, 0 };
		if (poll(&p, 1, 200) <= 0)
			continue;
		char buf[4096];
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		out.append(buf, (size_t)n);
	}
	return out;
}

// The kernel where the daemon's QEMU user can read it (libvirt also
// relabels the files it boots: better a copy than the build tree's).
std::string readable_kernel(const TempDir &dir)
{
	chmod(dir.path.c_str(), 0755);
	std::string kernel = dir.file("x86_64.elf");
	EXPECT_EQ(sh("cp '" + image("x86_64") + "' '" + kernel + "'").status, 0);
	chmod(kernel.c_str(), 0644);
	return kernel;
}

// `earlytrace domain-xml` for the test kernel with `append`, defined in
// libvirt as dom (undefined at the end by DefinedDomain).
void define_test_domain(const TempDir &dir, const std::string &name, const std::string &append)
{
	std::string kernel = readable_kernel(dir);
	std::string xml = dir.file("dom.xml");
	VmmResult r = run_vmm({ "domain-xml", "--kernel", kernel, "--append", append, "--mem", "64M",
				"--name", name, "-o", xml });
	ASSERT_EQ(r.status, 0) << r.err;
	Cmd c = virsh("define '" + xml + "'");
	ASSERT_EQ(c.status, 0) << c.out;
}

} // namespace

TEST(VirshStart, TheDefinitionBootsUnderQemu)
{
	std::string why = missing_prerequisite();
	if (!why.empty())
		GTEST_SKIP() << why;
	REQUIRE_KVM();
	TempDir dir;
	DefinedDomain dom("earlytrace-test-virsh-" + std::to_string(getpid()));
	ASSERT_NO_FATAL_FAILURE(define_test_domain(dir, dom.name, "exit=3 virsh"));
	// Paused first, so that COM1's pty is open here before the guest writes.
	Cmd c = virsh("start --paused " + dom.name);
	ASSERT_EQ(c.status, 0) << c.out;
	c = virsh("ttyconsole " + dom.name);
	ASSERT_EQ(c.status, 0) << c.out;
	std::string pty = c.out.substr(0, c.out.find('\n'));
	int fd = open(pty.c_str(), O_RDONLY | O_NOCTTY);
	ASSERT_GE(fd, 0) << pty;
	termios raw;
	ASSERT_EQ(tcgetattr(fd, &raw), 0);
	cfmakeraw(&raw);
	tcsetattr(fd, TCSANOW, &raw);
	c = virsh("resume " + dom.name);
	ASSERT_EQ(c.status, 0) << c.out;

	// The test kernel's own report, as `earlytrace run` prints it.
	std::string console = read_until(fd, "\ndone", 60);
	close(fd);
	EXPECT_NE(console.find("earlytrace test kernel x86_64"), std::string::npos) << console;
	EXPECT_NE(console.find("cmdline: exit=3 virsh"), std::string::npos) << console;
	EXPECT_NE(console.find("calltree phase=longmode total=816"), std::string::npos) << console;
	EXPECT_NE(console.find("\ndone"), std::string::npos) << console;
	EXPECT_EQ(virsh("domstate " + dom.name).out.substr(0, 7), "running");
}

TEST(VirshStart, AGuestResetEndsTheDomain)
{
	std::string why = missing_prerequisite();
	if (!why.empty())
		GTEST_SKIP() << why;
	REQUIRE_KVM();
	TempDir dir;
	DefinedDomain dom("earlytrace-test-virsh-reset-" + std::to_string(getpid()));
	ASSERT_NO_FATAL_FAILURE(define_test_domain(dir, dom.name, "reset=kbd"));
	Cmd c = virsh("start " + dom.name);
	ASSERT_EQ(c.status, 0) << c.out;
	// <on_reboot>destroy</on_reboot>: the reset ends the domain, as it ends
	// an earlytrace run.
	std::string state;
	for (double end = now_s() + 60; now_s() < end; usleep(250 * 1000)) {
		state = virsh("domstate " + dom.name).out;
		if (state.rfind("running", 0) != 0)
			break;
	}
	EXPECT_EQ(state.substr(0, 8), "shut off") << state;
}
