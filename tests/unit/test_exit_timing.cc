// SPDX-License-Identifier: MIT
// The exit-cost calibration before the guest's first instruction must
// never swallow a kick: --follow's periodic reader starts before it, and
// a read requested meanwhile used to leave the calibration spinning on
// KVM_RUN's EINTR forever (a --follow-period of 0.01 s hung every run).
#include <gtest/gtest.h>

#include <cstdio>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/fixtures.h"
#include "tests/kvm_translate_helper.h"
#include "tests/shim/earlytrace_shim.h"

TEST(ExitTiming, AKickPendingEndsTheCalibrationAndStaysForTheRunLoop)
{
	REQUIRE_KVM();
	// In a child with an alarm: a calibration that spins is a failure
	// (the child dies of SIGALRM), not a test suite that never ends. The
	// VM is the child's own (KVM refuses another process's).
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		alarm(20);
		struct kth *k = kth_open(4 << 20);
		if (!k) {
			fprintf(stderr, "%s\n", et_last_error());
			_exit(2);
		}
		int still_kicked = 0;
		int r = kth_time_exits_with_kick_pending(k, &still_kicked);
		kth_close(k);
		_exit(r == -1 && still_kicked ? 0 : 3);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status)
					  << " (SIGALRM: the calibration spun on the kick)";
	EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no VM; 3: timed although kicked, or cleared the kick";
}
