// SPDX-License-Identifier: MIT
#include "tests/boot/vmm_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace {

double now()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

} // namespace

VmmResult run_vmm(const VmmRun &run)
{
	VmmResult res;
	int out[2], err[2];

	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return res;
	pid_t pid = fork();
	if (pid == 0) {
		std::vector<char *> argv;
		std::string bin = ET_TEST_BIN;
		argv.push_back(&bin[0]);
		std::vector<std::string> args = run.args;
		for (auto &a : args)
			argv.push_back(&a[0]);
		argv.push_back(nullptr);
		for (const auto &e : run.env)
			putenv(strdup(e.c_str()));
		// No terminal on stdin: the VMM must not wait for keys.
		int devnull = open("/dev/null", O_RDONLY);
		dup2(devnull, 0);
		if (!run.stdout_path.empty()) {
			int fd = open(run.stdout_path.c_str(), O_WRONLY);
			if (fd < 0)
				_exit(126);
			dup2(fd, 1);
		} else {
			dup2(out[1], 1);
		}
		dup2(err[1], 2);
		if (run.as_nobody && (setgid(65534) || setuid(65534)))
			_exit(126);
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, nullptr);
		if (run.fsize_limit) {
			// Writes past the limit raise SIGXFSZ (default: the
			// process dies), which the VMM itself must deal with.
			struct rlimit rl = { (rlim_t)run.fsize_limit, (rlim_t)run.fsize_limit };
			if (setrlimit(RLIMIT_FSIZE, &rl))
				_exit(126);
		}
		execv(bin.c_str(), argv.data());
		_exit(127);
	}
	close(out[1]);
	close(err[1]);

	struct pollfd fds[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
	bool signalled = false;
	double deadline = now() + run.harness_timeout_s, signal_at = 0;
	int open_fds = 2;
	while (open_fds > 0) {
		int left_ms = (int)((deadline - now()) * 1000);
		if (left_ms <= 0) {
			kill(pid, SIGKILL);
			res.timed_out = true;
			break;
		}
		if (signal_at > 0 && !signalled) {
			int signal_ms = (int)((signal_at - now()) * 1000);
			if (signal_ms <= 0) {
				kill(pid, run.send_signal);
				signalled = true;
				continue;
			}
			left_ms = std::min(left_ms, signal_ms);
		}
		if (poll(fds, 2, left_ms) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
				continue;
			char buf[4096];
			ssize_t n = read(fds[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			(i == 0 ? res.out : res.err).append(buf, (size_t)n);
		}
		if (run.close_stdout && fds[0].fd >= 0 && !run.wait_for.empty() &&
		    res.out.find(run.wait_for) != std::string::npos) {
			close(fds[0].fd);
			fds[0].fd = -1;
			open_fds--;
		}
		if (run.send_signal && !signalled && signal_at == 0 && !run.wait_for.empty() &&
		    res.out.find(run.wait_for) != std::string::npos) {
			if (run.signal_delay_s > 0) {
				signal_at = now() + run.signal_delay_s;
			} else {
				kill(pid, run.send_signal);
				signalled = true;
			}
		}
	}
	for (auto &f : fds)
		if (f.fd >= 0)
			close(f.fd);
	int wstatus = 0;
	waitpid(pid, &wstatus, 0);
	res.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	return res;
}

VmmResult run_vmm(std::vector<std::string> args)
{
	VmmRun run;
	run.args = std::move(args);
	return run_vmm(run);
}

std::string image(const char *arch)
{
	return std::string(ET_TEST_IMAGES) + "/" + arch + ".elf";
}

std::string temp_path(const std::string &name)
{
	const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
	std::string test = info->name(); // "Name/0" for parameterized tests

	for (char &c : test)
		if (c == '/')
			c = '_';
	return ::testing::TempDir() + "earlytrace-" + std::to_string(getpid()) + "-" + test + "-" +
	       name;
}
