// SPDX-License-Identifier: MIT
// What the VMM learns of its KVM before any guest runs (kvm_traits.c), and
// the code hooks that stand in for debug-register breakpoints where a KVM
// reports none (code_hook.c).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/fixtures.h"
#include "tests/kvm_hook_helper.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

// The traits in a child with $EARLYTRACE_KVM_TRAITS set (they are probed
// once per process): its exit status, and what it printed.
struct ChildTraits {
	int status = -1;
	std::string out;
};

ChildTraits traits_with_env(const char *env)
{
	int fds[2];
	ChildTraits c;
	if (pipe(fds))
		return c;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		setenv("EARLYTRACE_KVM_TRAITS", env, 1);
		khh_traits t;
		std::string s;
		if (khh_get_traits(&t))
			s = std::string("error: ") + et_last_error();
		else
			s = "int3=" + std::to_string(t.int3_exits) + " hw=" +
			    std::to_string(t.hw_bp_exits) + " ticks=" +
			    std::to_string(t.int3_exit_ticks) + " why_int3=" + t.no_int3 +
			    " why_hw=" + t.no_hw_bp;
		(void)!write(fds[1], s.data(), s.size());
		_exit(0);
	}
	close(fds[1]);
	char buf[512];
	ssize_t n;
	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		c.out.append(buf, (size_t)n);
	close(fds[0]);
	waitpid(pid, &c.status, 0);
	return c;
}

} // namespace

// The probe runs in a scratch VM: the guest's own RAM is as vm_create()
// made it, all zero, before the kernel is loaded.
TEST(KvmTraits, TheProbeRunsNothingInTheGuest)
{
	REQUIRE_KVM();
	EXPECT_EQ(khh_fresh_ram_is_untouched(4 << 20), 1) << et_last_error();
}

// What every KVM the project runs on reports, consistently: int3 exits
// come with their round trip timed; where something is missing, why.
TEST(KvmTraits, EachTraitIsReportedOrExplained)
{
	REQUIRE_KVM();
	khh_traits t;
	ASSERT_EQ(khh_get_traits(&t), 0) << et_last_error();
	EXPECT_TRUE(t.code_hooks) << t.no_code_hooks;
	EXPECT_EQ(t.int3_exits, t.int3_exit_ticks > 0);
	EXPECT_EQ(t.int3_exits, t.no_int3[0] == '\0') << t.no_int3;
	EXPECT_EQ(t.hw_bp_exits, t.no_hw_bp[0] == '\0') << t.no_hw_bp;
	if (!t.int3_exits) {
		EXPECT_NE(std::string(t.no_int3).find("int3"), std::string::npos) << t.no_int3;
	}
}

TEST(KvmTraits, TheEnvironmentTakesTraitsAwayAndSaysSo)
{
	REQUIRE_KVM();
	ChildTraits c = traits_with_env("no-int3,no-hw-bp");
	ASSERT_TRUE(WIFEXITED(c.status));
	EXPECT_NE(c.out.find("int3=0 hw=0 ticks=0"), std::string::npos) << c.out;
	EXPECT_NE(c.out.find("why_int3=this KVM's int3 exits are not used "
			     "($EARLYTRACE_KVM_TRAITS=no-int3,no-hw-bp)"),
		  std::string::npos)
		<< c.out;

	c = traits_with_env("no-int3,fast");
	EXPECT_NE(c.out.find("error: $EARLYTRACE_KVM_TRAITS: unknown word 'fast'"),
		  std::string::npos)
		<< c.out;
}

// A code hook over a one-byte instruction (and the first byte of the
// next): the handler runs once with rip on the hooked instruction, both
// instructions run exactly once after it, and the code is as it was.
TEST(CodeHook, FiresOnceAndTheGuestRunsTheCodeAsItWas)
{
	REQUIRE_KVM();
	khh_hook_run r;
	ASSERT_EQ(khh_code_hook_run(0, &r), 0) << et_last_error();
	EXPECT_EQ(r.handler_calls, 1u);
	EXPECT_EQ(r.handler_rip, 0x100005u);
	EXPECT_EQ(r.hooked_at, 0x100005u);
	EXPECT_TRUE(r.reached_end);
	EXPECT_EQ(r.eax, 3u) << "mov 1, then two inc: each instruction once";
	EXPECT_TRUE(r.bytes_restored);
}

// On a function-entry site the hook goes after it: the site is the
// tracer's and ftrace's to patch and check.
TEST(CodeHook, OnAFunctionEntrySiteItGoesPastTheSite)
{
	REQUIRE_KVM();
	khh_hook_run r;
	ASSERT_EQ(khh_code_hook_run(1, &r), 0) << et_last_error();
	EXPECT_EQ(r.hooked_at, 0x100005u);
	EXPECT_EQ(r.handler_calls, 1u);
	EXPECT_EQ(r.handler_rip, 0x100005u);
	EXPECT_TRUE(r.reached_end);
	EXPECT_EQ(r.eax, 3u);
	EXPECT_TRUE(r.bytes_restored);
}
