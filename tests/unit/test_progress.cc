// SPDX-License-Identifier: MIT
// The progress line: written only to a terminal (a pty here), erased when
// the work ends or other output comes, never to a pipe; its text.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/shim/earlytrace_shim.h"
#include "vmm/trace/progress.h"

namespace {

struct Counters {
	uint64_t events = 0;
};

void sample(void *ctx, progress_sample *s)
{
	Counters *c = static_cast<Counters *>(ctx);
	c->events += 1000;
	s->events = c->events;
	s->dropped = 3;
	s->has_time = true;
	s->guest_ns = 1500000000; // 1.5 s
	s->quiet_marker = 7;	  // the console never printed
}

// What fd has to read now (a line refreshed meanwhile may add more: read
// at most a few times).
std::string drain(int fd)
{
	std::string out;
	char buf[4096];
	pollfd p{ fd, POLLIN, 0 };
	for (int i = 0; i < 8 && poll(&p, 1, 100) > 0; i++) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		out.append(buf, (size_t)n);
	}
	return out;
}

// TERM as a terminal would have it, for the test's length.
struct Term {
	std::string old;
	bool had;
	Term() : had(getenv("TERM") != nullptr)
	{
		if (had)
			old = getenv("TERM");
		setenv("TERM", "xterm", 1);
	}
	~Term()
	{
		if (had)
			setenv("TERM", old.c_str(), 1);
		else
			unsetenv("TERM");
	}
};

} // namespace

TEST(Progress, NothingGoesToAPipe)
{
	Term term;
	int fds[2];
	ASSERT_EQ(pipe(fds), 0);
	Counters c;
	progress p;
	ASSERT_EQ(progress_start(&p, fds[1], 0.01, sample, &c), 0);
	EXPECT_FALSE(p.started);
	usleep(1200 * 1000);
	progress_before_output(&p);
	progress_stop(&p);
	close(fds[1]);
	EXPECT_EQ(drain(fds[0]), "");
	EXPECT_EQ(c.events, 0u); // never even sampled
	close(fds[0]);
}

namespace {

// The progress line on a terminal (a pty) for 1.3 s, sampled every 50 ms
// by `sampler` (the line waits for a second of quiet console); with
// `other_output`, other output comes just before it stops. What the
// terminal received.
void on_a_terminal(void (*sampler)(void *ctx, progress_sample *s), Counters *c,
		   bool other_output, std::string *shown)
{
	int master, slave;
	ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
	progress p;
	ASSERT_EQ(progress_start(&p, slave, 0.05, sampler, c), 0);
	EXPECT_TRUE(p.started);
	usleep(1300 * 1000);
	if (other_output)
		progress_before_output(&p);
	progress_stop(&p);
	*shown = drain(master);
	close(slave);
	close(master);
}

} // namespace

TEST(Progress, ATerminalSeesTheLineAndItsErasure)
{
	Term term;
	Counters c;
	std::string shown;
	on_a_terminal(sample, &c, false, &shown);
	ASSERT_FALSE(HasFatalFailure());
	EXPECT_NE(shown.find("\r\033[Kearlytrace: "), std::string::npos) << shown;
	EXPECT_NE(shown.find(" events ("), std::string::npos) << shown;
	EXPECT_NE(shown.find("3 dropped, last event at 1.500 s guest time"), std::string::npos)
		<< shown;
	EXPECT_EQ(shown.find('\n'), std::string::npos) << shown; // refreshed in place
	// Stopping leaves an erased line: nothing of it stays on the screen.
	ASSERT_GE(shown.size(), 4u);
	EXPECT_EQ(shown.substr(shown.size() - 4), "\r\033[K") << shown;
}

void busy_console(void *ctx, progress_sample *s)
{
	sample(ctx, s);
	s->quiet_marker = static_cast<Counters *>(ctx)->events; // printed since the last tick
}

TEST(Progress, AConsoleThatKeepsPrintingKeepsTheLineAway)
{
	Term term;
	Counters c;
	std::string shown;
	// Other output: nothing shown, so nothing to erase.
	on_a_terminal(busy_console, &c, true, &shown);
	ASSERT_FALSE(HasFatalFailure());
	EXPECT_GT(c.events, 10000u); // it did sample
	EXPECT_EQ(shown, "");
}

// The line's text without and with a guest time.
TEST(Progress, LineText)
{
	static const struct {
		bool has_time;
		uint64_t guest_ns;
		const char *line;
	} cases[] = {
		{ false, 0, "earlytrace: 14.2 s, 203456 events (14530/s), 0 dropped" },
		{ true, 13901234567,
		  "earlytrace: 14.2 s, 203456 events (14530/s), 0 dropped, last event at "
		  "13.901 s guest time" },
	};
	for (const auto &c : cases) {
		progress_sample s{};
		s.events = 203456;
		s.dropped = 0;
		s.has_time = c.has_time;
		s.guest_ns = c.guest_ns;
		char buf[256];
		progress_format(buf, sizeof(buf), 14.24, &s, 14530.4);
		EXPECT_STREQ(buf, c.line);
	}
}
