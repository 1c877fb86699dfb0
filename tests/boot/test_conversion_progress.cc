// SPDX-License-Identifier: MIT
// The progress line of long conversions, through the real binary: `report`
// and `check` with stderr on a terminal (a pty) show it and erase it; with
// stderr on a pipe, nothing of it is written.
//
// No test waits on the conversion's speed: standard output is a pipe this
// test leaves unread until the line has come (or for two seconds, where it
// must not come), so the command is held in the middle of its work for as
// long as the test needs.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

double now_s()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

// Appends what fd has now, waiting at most wait_ms for the first byte;
// false at its end.
bool read_some(int fd, std::string &into, int wait_ms)
{
	pollfd p{ fd, POLLIN, 0 };
	if (poll(&p, 1, wait_ms) <= 0)
		return true;
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n <= 0)
		return false; // a pty's master reads EIO once the child is gone
	into.append(buf, (size_t)n);
	return true;
}

struct Converted {
	int status = -1;
	std::string out;	  // its standard output, whole
	std::string err;	  // what its stderr (pty or pipe) received
	std::string err_held; // ...of it, while standard output was held
};

// Runs the binary with stdout on a pipe that is not read until `held_until`
// appears on stderr or hold_s passes, then reads everything to the end.
Converted convert(const std::vector<std::string> &args, bool stderr_is_a_terminal,
		  const std::string &held_until, double hold_s)
{
	Converted c;
	int out[2], err_pipe[2] = { -1, -1 }, master = -1, slave = -1;
	if (pipe2(out, O_CLOEXEC))
		return c;
	if (stderr_is_a_terminal) {
		if (openpty(&master, &slave, nullptr, nullptr, nullptr))
			return c;
		fcntl(master, F_SETFD, FD_CLOEXEC);
		fcntl(slave, F_SETFD, FD_CLOEXEC);
	} else if (pipe2(err_pipe, O_CLOEXEC)) {
		return c;
	}
	int err_read = stderr_is_a_terminal ? master : err_pipe[0];
	int err_write = stderr_is_a_terminal ? slave : err_pipe[1];
	pid_t pid = fork();
	if (pid == 0) {
		std::vector<std::string> argv_s = args;
		std::vector<char *> argv;
		std::string bin = ET_TEST_BIN;
		argv.push_back(&bin[0]);
		for (auto &a : argv_s)
			argv.push_back(&a[0]);
		argv.push_back(nullptr);
		setenv("TERM", "xterm", 1); // a terminal that takes the line's escapes
		int devnull = open("/dev/null", O_RDONLY);
		dup2(devnull, 0);
		dup2(out[1], 1);
		dup2(err_write, 2);
		signal(SIGPIPE, SIG_DFL);
		execv(argv[0], argv.data());
		_exit(127);
	}
	close(out[1]);
	close(err_write);
	for (double end = now_s() + hold_s;
	     now_s() < end && c.err.find(held_until) == std::string::npos;)
		if (!read_some(err_read, c.err, 100))
			break;
	c.err_held = c.err;
	// Let it go: read both to their ends (a pty's master reads EIO once
	// the child has exited, the pipes their ends).
	bool out_open = true, err_open = true;
	while (out_open || err_open) {
		if (out_open)
			out_open = read_some(out[0], c.out, 50);
		if (err_open)
			err_open = read_some(err_read, c.err, 50);
	}
	int st;
	waitpid(pid, &st, 0);
	c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	close(out[0]);
	close(err_read);
	return c;
}

// A trace of the x86_64 test kernel, its calls and exits: ftrace text of
// some 180 KB, more than a pipe holds.
std::string traced(const TempDir &dir)
{
	std::string t = dir.file("t.etr");
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--append", "exit=0",
				"--timeout", "60", "-o", t });
	EXPECT_EQ(r.status, 0) << r.err;
	return t;
}

const char line_start[] = "\r\033[Kearlytrace: ";

} // namespace

TEST(ConversionProgress, ReportShowsTheLineOnATerminalAndErasesIt)
{
	REQUIRE_KVM();
	TempDir dir;
	std::string t = traced(dir);
	std::string whole = run_vmm({ "report", t }).out;
	ASSERT_GT(whole.size(), 100000u);

	Converted c = convert({ "report", t }, true, " events (", 60);
	EXPECT_EQ(c.status, 0) << c.err;
	EXPECT_EQ(c.out, whole); // the report itself is not touched
	EXPECT_NE(c.err_held.find(line_start), std::string::npos) << c.err_held;
	EXPECT_NE(c.err_held.find(" events ("), std::string::npos) << c.err_held;
	EXPECT_NE(c.err_held.find(", 0 dropped"), std::string::npos) << c.err_held;
	EXPECT_EQ(c.err.find('\n'), std::string::npos) << c.err; // refreshed in place
	// Nothing of it stays: the last thing written is the erasure.
	ASSERT_GE(c.err.size(), 4u);
	EXPECT_EQ(c.err.substr(c.err.size() - 4), "\r\033[K");
}

TEST(ConversionProgress, ReportWritesNothingOfItToAPipe)
{
	REQUIRE_KVM();
	TempDir dir;
	std::string t = traced(dir);
	// Held for two seconds: the line would have come after one.
	Converted c = convert({ "report", t }, false, " events (", 2);
	EXPECT_EQ(c.status, 0) << c.err;
	EXPECT_GT(c.out.size(), 100000u);
	EXPECT_EQ(c.err, "");
}

TEST(ConversionProgress, ReportToTheTerminalItselfHasNoLine)
{
	REQUIRE_KVM();
	TempDir dir;
	std::string t = traced(dir);
	// stdout and stderr on one pty: the report's lines, never the
	// progress line among them.
	int master, slave;
	ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("TERM", "xterm", 1);
		dup2(slave, 1);
		dup2(slave, 2);
		close(master);
		execl(ET_TEST_BIN, ET_TEST_BIN, "report", t.c_str(), (char *)nullptr);
		_exit(127);
	}
	close(slave);
	std::string screen;
	// Hold the terminal for two seconds before taking what it shows: the
	// report is larger than the terminal buffers, so it waits mid-way.
	usleep(2000 * 1000);
	while (read_some(master, screen, 1000))
		;
	int st;
	waitpid(pid, &st, 0);
	close(master);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_GT(screen.size(), 100000u);
	EXPECT_NE(screen.find("# tracer: function"), std::string::npos);
	// The line's own mark: the erasure it starts with.
	EXPECT_EQ(screen.find("\033[K"), std::string::npos)
		<< screen.substr(screen.find("\033[K"), 200);
}

TEST(ConversionProgress, CheckShowsTheLineOnATerminalOnly)
{
	REQUIRE_KVM();
	TempDir dir;
	std::string t = traced(dir);
	// 4000 assertions: a KTAP report larger than a pipe holds.
	std::string expect = dir.file("many.expect");
	FILE *f = fopen(expect.c_str(), "w");
	ASSERT_NE(f, nullptr);
	for (int i = 0; i < 4000; i++)
		fprintf(f, "called ct_leaf\n");
	fclose(f);

	Converted c = convert({ "check", t, "--expect", expect }, true, " events (", 60);
	EXPECT_EQ(c.status, 0) << c.err;
	EXPECT_NE(c.out.find("ok 4000 called ct_leaf"), std::string::npos);
	EXPECT_NE(c.err_held.find(line_start), std::string::npos) << c.err_held;
	ASSERT_GE(c.err.size(), 4u);
	EXPECT_EQ(c.err.substr(c.err.size() - 4), "\r\033[K");

	c = convert({ "check", t, "--expect", expect }, false, " events (", 2);
	EXPECT_EQ(c.status, 0) << c.err;
	EXPECT_NE(c.out.find("ok 4000 called ct_leaf"), std::string::npos);
	EXPECT_EQ(c.err, "");
}
