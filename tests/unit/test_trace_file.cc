// SPDX-License-Identifier: MIT
// The trace file: round trips, a file cut at every byte, corrupt and
// hostile files, runs that die without END, and a full disk (tmpfs and
// RLIMIT_FSIZE) with an exact count of what could not be written.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <atomic>
#include <map>
#include <pthread.h>
#include <thread>
#include <random>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/util/version.h"

namespace {

void spit(const std::string &path, const std::string &bytes)
{
	std::ofstream f(path, std::ios::binary | std::ios::trunc);
	f.write(bytes.data(), (std::streamsize)bytes.size());
}

struct symbol test_syms[] = {
	{ 0xffffffff81000000ull, 0x100, "start_kernel", 'T' },
	{ 0xffffffff81000100ull, 0x40, "foo", 't' },
	{ 0xffffffff81000200ull, 0x10, "some_data", 'D' }, // not a function: not written
	{ 0xffffffff81000300ull, 0x80, "x86_64_start_reservations", 'T' },
};
struct symtab test_tab = { test_syms, 4 };

std::vector<et_ring_record> make_events(size_t n, uint64_t tsc0 = 1000)
{
	std::vector<et_ring_record> v;
	for (size_t i = 0; i < n; i++)
		v.push_back(make_call(tsc0 + i * 10, 0xffffffff81000000ull + (i % 3) * 0x100,
			       0xffffffff81000310ull, (uint32_t)(i % 2),
			       (uint16_t)(i % 3 + 1)));
	return v;
}

trace_meta test_meta()
{
	trace_meta m{};
	m.kernel_path = "images/x86_64.elf";
	m.build_id_hex = "0123abcd";
	m.symbol_source = ".symtab of images/x86_64.elf (4 symbols)";
	m.tsc_khz = 2000000;
	m.mode = "breakpoint";
	return m;
}

// A small complete trace; returns the record boundaries (offsets).
std::vector<uint64_t> write_small(const std::string &path, const std::vector<et_ring_record> &e)
{
	std::vector<uint64_t> bounds;
	trace_writer *w = nullptr;
	trace_meta m = test_meta();
	EXPECT_EQ(trace_writer_open(&w, path.c_str(), &m), 0) << et_last_error();
	bounds.push_back(TRACE_FILE_HEADER_SIZE);
	bounds.push_back(trace_writer_bytes(w));
	EXPECT_EQ(trace_writer_symbols(w, &test_tab), 0);
	bounds.push_back(trace_writer_bytes(w));
	EXPECT_EQ(trace_writer_events(w, e.data(), e.size() / 2), 0);
	bounds.push_back(trace_writer_bytes(w));
	EXPECT_EQ(trace_writer_drops(w, 5, 1500, "host buffer full"), 0);
	bounds.push_back(trace_writer_bytes(w));
	EXPECT_EQ(trace_writer_mark(w, 1600, "handoff to guest ring"), 0);
	bounds.push_back(trace_writer_bytes(w));
	EXPECT_EQ(trace_writer_events(w, e.data() + e.size() / 2, e.size() - e.size() / 2), 0);
	bounds.push_back(trace_writer_bytes(w));
	EXPECT_EQ(trace_writer_close(w, e.size() + 5, 5, "guest exited (0)"), 0);
	return bounds;
}

std::vector<et_ring_record> read_events(trace_reader *r)
{
	std::vector<et_ring_record> out;
	trace_record rec;
	int ret;
	trace_reader_rewind(r);
	while ((ret = trace_reader_next(r, &rec)) > 0)
		out.insert(out.end(), rec.events, rec.events + rec.nr_events);
	EXPECT_EQ(ret, 0) << et_last_error();
	return out;
}

bool same(const et_ring_record &a, const et_ring_record &b)
{
	return !memcmp(&a, &b, sizeof(a));
}

// Every report format over r, into a scratch stream: must not crash.
void all_reports(trace_reader *r)
{
	for (report_format f : { REPORT_FTRACE, REPORT_JSON, REPORT_SUMMARY }) {
		FILE *out = tmpfile();
		ASSERT_NE(out, nullptr);
		report_write(r, f, out);
		fclose(out);
	}
}

TEST(TraceFile, RoundTrip)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	auto e = make_events(10);
	write_small(path, e);

	trace_reader *r = nullptr;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(r);
	EXPECT_TRUE(in->has_meta);
	EXPECT_STREQ(in->tool_version, EARLYTRACE_VERSION);
	EXPECT_STREQ(in->kernel_path, "images/x86_64.elf");
	EXPECT_STREQ(in->build_id_hex, "0123abcd");
	EXPECT_STREQ(in->symbol_source, ".symtab of images/x86_64.elf (4 symbols)");
	EXPECT_STREQ(in->mode, "breakpoint");
	EXPECT_EQ(in->tsc_khz, 2000000u);
	EXPECT_GT(in->start_time_ns, 1600000000ull * 1000000000ull);
	EXPECT_EQ(in->nr_events, 10u);
	EXPECT_EQ(in->events_by_source[1] + in->events_by_source[2] + in->events_by_source[3], 10u);
	EXPECT_EQ(in->nr_cpus, 2u);
	EXPECT_EQ(in->min_tsc, 1000u);
	EXPECT_EQ(in->max_tsc, 1090u);
	EXPECT_EQ(in->dropped, 5u);
	EXPECT_STREQ(in->drop_reason, "host buffer full");
	EXPECT_STREQ(in->last_mark, "handoff to guest ring");
	EXPECT_TRUE(in->has_end);
	EXPECT_EQ(in->end_recorded, 15u);
	EXPECT_EQ(in->end_written, 10u);
	EXPECT_EQ(in->end_dropped, 5u);
	EXPECT_EQ(in->end_lost, 0u);
	EXPECT_STREQ(in->exit_reason, "guest exited (0)");
	EXPECT_FALSE(in->truncated);

	// Only the function symbols travel, sorted, with sizes and types.
	const symtab *tab = trace_reader_symtab(r);
	ASSERT_EQ(tab->nr, 3u);
	EXPECT_STREQ(tab->syms[0].name, "start_kernel");
	EXPECT_EQ(tab->syms[0].size, 0x100u);
	EXPECT_EQ(tab->syms[0].type, 'T');
	char buf[64];
	EXPECT_STREQ(symtab_format(tab, 0xffffffff81000105ull, buf, sizeof(buf)), "foo+0x5");
	EXPECT_EQ(symtab_lookup(tab, 0xffffffff81000200ull, nullptr), nullptr);

	auto got = read_events(r);
	ASSERT_EQ(got.size(), e.size());
	for (size_t i = 0; i < e.size(); i++)
		EXPECT_TRUE(same(got[i], e[i])) << i;

	size_t nr;
	const trace_note *notes = trace_reader_notes(r, &nr);
	ASSERT_EQ(nr, 2u);
	EXPECT_EQ(notes[0].type, (uint32_t)TRACE_REC_DROPS);
	EXPECT_EQ(notes[0].dropped, 5u);
	EXPECT_EQ(notes[0].tsc, 1500u);
	EXPECT_EQ(notes[1].type, (uint32_t)TRACE_REC_MARK);
	EXPECT_STREQ(notes[1].text, "handoff to guest ring");

	EXPECT_STREQ(trace_reader_state(r, buf, sizeof(buf)), "finished: guest exited (0)");
	trace_reader_close(r);
}

TEST(TraceFile, RecordLayoutIsAsDocumented)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	write_small(path, make_events(2));
	std::string b = read_file_text(path);
	ASSERT_GE(b.size(), 32u);
	EXPECT_EQ(memcmp(b.data(), "ETTRACE\0", 8), 0);
	EXPECT_EQ(b[8], TRACE_FILE_VERSION); // version
	EXPECT_EQ(b[12], 16);	     // header length
	EXPECT_EQ(b[16], TRACE_REC_META);
	uint32_t len;
	memcpy(&len, b.data() + 20, 4);
	uint32_t crc = (uint32_t)crc32(0, (const Bytef *)b.data() + 16, 8 + len);
	uint32_t stored;
	memcpy(&stored, b.data() + 24 + len, 4);
	EXPECT_EQ(crc, stored);
}

TEST(TraceFile, LargeBatchesAreSplit)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	auto e = make_events(20000);
	trace_writer *w;
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), nullptr), 0);
	ASSERT_EQ(trace_writer_events(w, e.data(), e.size()), 0);
	EXPECT_EQ(trace_writer_written(w), 20000u);
	EXPECT_EQ(trace_writer_close(w, 20000, 0, "done"), 0);

	trace_reader *r;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	// META, 3 EVENTS (8192 + 8192 + 3616), END.
	EXPECT_EQ(trace_reader_info(r)->nr_records, 5u);
	auto got = read_events(r);
	ASSERT_EQ(got.size(), e.size());
	EXPECT_TRUE(same(got[19999], e[19999]));
	// No META from a NULL trace_meta: empty strings, not NULL.
	EXPECT_STREQ(trace_reader_info(r)->kernel_path, "");
	trace_reader_close(r);
}

// The VMM signals its vCPU threads all the time, and tmpfs gives up a
// fallocate() when a signal arrives (EINTR, the allocation undone): the
// file must grow anyway. Before, a trace in /dev/shm (the test VM's) lost
// its events from the first interrupted growth on (a retry alone could
// start over forever). Here a thread signals the writer without pause
// while it grows the file a few times.
TEST(TraceFile, GrowthWhileSignalsArriveKeepsEveryEvent)
{
	if (!file_exists("/dev/shm"))
		GTEST_SKIP() << "no /dev/shm (tmpfs)";
	char path[] = "/dev/shm/earlytrace-eintr-XXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	struct sigaction sa = {}, old = {};
	sa.sa_handler = [](int) {};
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; // no SA_RESTART, as for the vCPU threads' kick
	ASSERT_EQ(sigaction(SIGUSR2, &sa, &old), 0);
	pthread_t writer = pthread_self();
	std::atomic<bool> stop{ false };
	std::thread storm([&] {
		while (!stop.load())
			pthread_kill(writer, SIGUSR2);
	});

	auto e = make_events(8192);
	trace_writer *w;
	const size_t batches = 160; // 40 MiB of events: five growths of the file
	ASSERT_EQ(trace_writer_open(&w, path, nullptr), 0);
	for (size_t i = 0; i < batches; i++)
		ASSERT_EQ(trace_writer_events(w, e.data(), e.size()), 0) << et_last_error();
	stop = true;
	storm.join();
	sigaction(SIGUSR2, &old, nullptr);
	EXPECT_EQ(trace_writer_written(w), batches * e.size());
	EXPECT_EQ(trace_writer_close(w, batches * e.size(), 0, "done"), 0) << et_last_error();
	unlink(path);
}

TEST(TraceFile, KilledWriterLeavesReadableFile)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		trace_writer *w;
		trace_meta m = test_meta();
		auto e = make_events(7);
		if (trace_writer_open(&w, path.c_str(), &m))
			_exit(1);
		trace_writer_symbols(w, &test_tab);
		trace_writer_events(w, e.data(), e.size());
		trace_writer_mark(w, 5000, "handoff to guest ring");
		raise(SIGKILL);
		_exit(2);
	}
	int st;
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFSIGNALED(st));

	trace_reader *r;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(r);
	EXPECT_FALSE(in->has_end);
	EXPECT_FALSE(in->truncated);
	EXPECT_EQ(in->nr_events, 7u);
	// The space allocated ahead is still there, zeros after the records.
	struct stat sb;
	ASSERT_EQ(stat(path.c_str(), &sb), 0);
	EXPECT_EQ(in->data_size + in->unwritten_tail, (uint64_t)sb.st_size);
	EXPECT_GT(in->unwritten_tail, 0u);
	char buf[256];
	EXPECT_STREQ(trace_reader_state(r, buf, sizeof(buf)),
		     "run did not finish cleanly: last mark 'handoff to guest ring', 7 events "
		     "written");
	trace_reader_close(r);
}

// Close cuts the space allocated ahead: the file ends with END.
TEST(TraceFile, ClosedFileEndsWithEnd)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	trace_writer *w;
	trace_meta m = test_meta();
	auto e = make_events(100);
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), &m), 0) << et_last_error();
	ASSERT_EQ(trace_writer_events(w, e.data(), e.size()), 0);
	uint64_t bytes = trace_writer_bytes(w);
	ASSERT_EQ(trace_writer_close(w, 100, 0, "done"), 0) << et_last_error();
	struct stat sb;
	ASSERT_EQ(stat(path.c_str(), &sb), 0);
	trace_reader *r;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(r);
	EXPECT_TRUE(in->has_end);
	EXPECT_EQ(in->unwritten_tail, 0u);
	EXPECT_EQ(in->data_size, (uint64_t)sb.st_size);
	EXPECT_GT((uint64_t)sb.st_size, bytes) << "END follows the events";
	trace_reader_close(r);
}

// Events reach the file through its mapping: storing a thousand of them one
// at a time costs no write() (the kernel's count of this process's write
// system calls does not move).
TEST(TraceFile, EventsCostNoWriteCall)
{
	auto writes = []() -> long {
		std::ifstream io("/proc/self/io");
		std::string key;
		long v;
		while (io >> key >> v)
			if (key == "syscw:")
				return v;
		return -1;
	};
	if (writes() < 0)
		GTEST_SKIP() << "no /proc/self/io (task I/O accounting)";
	TempDir d;
	std::string path = d.file("t.ettrace");
	trace_writer *w;
	trace_meta m = test_meta();
	auto e = make_events(1);
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), &m), 0) << et_last_error();
	long before = writes();
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(trace_writer_events(w, e.data(), 1), 0);
	long after = writes();
	EXPECT_LT(after - before, 10) << "a write() per event";
	ASSERT_EQ(trace_writer_close(w, 1000, 0, "done"), 0) << et_last_error();
	trace_reader *r;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	EXPECT_EQ(trace_reader_info(r)->nr_events, 1000u);
	trace_reader_close(r);
}

// An output that cannot be mapped (/dev/null, a pipe) gets each record by
// write(): a pipe's reader sees a whole, readable trace.
TEST(TraceFile, StreamOutputsAreWritten)
{
	trace_writer *w;
	trace_meta m = test_meta();
	auto e = make_events(5);
	ASSERT_EQ(trace_writer_open(&w, "/dev/null", &m), 0) << et_last_error();
	// A device is shared, not locked: a second run may write to it too
	// (parallel runs with -o /dev/null).
	trace_writer *w2;
	ASSERT_EQ(trace_writer_open(&w2, "/dev/null", &m), 0) << et_last_error();
	EXPECT_EQ(trace_writer_close(w2, 0, 0, "done"), 0) << et_last_error();
	EXPECT_EQ(trace_writer_events(w, e.data(), e.size()), 0);
	EXPECT_EQ(trace_writer_close(w, 5, 0, "done"), 0) << et_last_error();

	TempDir d;
	std::string fifo = d.file("fifo"), copy = d.file("copy.ettrace");
	ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		trace_writer *cw;
		if (trace_writer_open(&cw, fifo.c_str(), &m) ||
		    trace_writer_events(cw, e.data(), e.size()) ||
		    trace_writer_close(cw, 5, 0, "done"))
			_exit(1);
		_exit(0);
	}
	// The writer waits for its reader, as a shell redirection does: one
	// that finished first (a FIFO opened read-write does not wait) would
	// have lost its trace with the FIFO's last close. (A slow child can
	// only make this pass, never fail.)
	usleep(200 * 1000);
	int st;
	ASSERT_EQ(waitpid(pid, &st, WNOHANG), 0)
		<< "the writer finished on a FIFO nobody had opened for reading: its trace is lost";
	{
		std::ifstream in(fifo, std::ios::binary);
		std::ofstream out(copy, std::ios::binary);
		out << in.rdbuf();
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	trace_reader *r;
	ASSERT_EQ(trace_reader_open(&r, copy.c_str()), 0) << et_last_error();
	EXPECT_EQ(trace_reader_info(r)->nr_events, 5u);
	EXPECT_TRUE(trace_reader_info(r)->has_end);
	trace_reader_close(r);
}

// A zero record header ends the records (the writer's unwritten space), but
// only a whole one: a header with type 0 and a length is corrupt.
TEST(TraceFile, ZeroHeaderEndsTheRecords)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	trace_writer *w;
	trace_meta m = test_meta();
	auto e = make_events(3);
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), &m), 0) << et_last_error();
	ASSERT_EQ(trace_writer_events(w, e.data(), e.size()), 0);
	uint64_t end = trace_writer_bytes(w);
	ASSERT_EQ(trace_writer_close(w, 3, 0, "done"), 0);
	// Replace END by zeros, as if the writer had died before it.
	{
		int fd = open(path.c_str(), O_RDWR);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(ftruncate(fd, (off_t)end), 0);
		ASSERT_EQ(ftruncate(fd, (off_t)end + 4096), 0);
		close(fd);
	}
	trace_reader *r;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	EXPECT_EQ(trace_reader_info(r)->nr_events, 3u);
	EXPECT_FALSE(trace_reader_info(r)->has_end);
	EXPECT_EQ(trace_reader_info(r)->unwritten_tail, 4096u);
	trace_reader_close(r);
	{
		int fd = open(path.c_str(), O_RDWR);
		uint8_t len = 32;
		ASSERT_EQ(pwrite(fd, &len, 1, (off_t)end + 4), 1);
		close(fd);
	}
	EXPECT_NE(trace_reader_open(&r, path.c_str()), 0) << "type 0 with a length";
}

TEST(TraceFile, TruncatedAtEveryOffset)
{
	TempDir d;
	std::string full = d.file("full.ettrace"), cut = d.file("cut.ettrace");
	auto e = make_events(6);
	std::vector<uint64_t> bounds = write_small(full, e);
	std::string bytes = read_file_text(full);
	bounds.push_back(bytes.size());

	for (size_t len = 0; len <= bytes.size(); len++) {
		spit(cut, bytes.substr(0, len));
		trace_reader *r = nullptr;
		int ret = trace_reader_open(&r, cut.c_str());
		if (len < TRACE_FILE_HEADER_SIZE) {
			EXPECT_EQ(ret, -1) << len;
			EXPECT_NE(strstr(et_last_error(), "not an earlytrace trace file"), nullptr);
			continue;
		}
		ASSERT_EQ(ret, 0) << len << ": " << et_last_error();
		const trace_info *in = trace_reader_info(r);
		bool boundary = false;
		for (uint64_t b : bounds)
			boundary |= b == len;
		EXPECT_EQ(in->truncated, !boundary) << len;
		EXPECT_EQ(in->has_end, len == bytes.size()) << len;
		auto got = read_events(r);
		EXPECT_EQ(got.size(), in->nr_events);
		ASSERT_LE(got.size(), e.size());
		for (size_t i = 0; i < got.size(); i++)
			EXPECT_TRUE(same(got[i], e[i]));
		if (in->truncated) {
			char buf[256];
			std::string want = "truncated after " + std::to_string(got.size()) + " events";
			EXPECT_NE(std::string(trace_reader_state(r, buf, sizeof(buf))).find(want),
				  std::string::npos);
		}
		all_reports(r);
		trace_reader_close(r);
	}
}

TEST(TraceFile, CrcMismatchNamesTheOffset)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	std::vector<uint64_t> bounds = write_small(path, make_events(6));
	std::string bytes = read_file_text(path);
	// Flip a byte inside the first EVENTS payload (bounds[2] starts it).
	bytes[bounds[2] + 8 + 3] ^= 0x40;
	spit(path, bytes);
	trace_reader *r = nullptr;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), -1);
	std::string msg = et_last_error();
	EXPECT_NE(msg.find("CRC mismatch"), std::string::npos) << msg;
	EXPECT_NE(msg.find("offset " + std::to_string(bounds[2])), std::string::npos) << msg;
}

TEST(TraceFile, RefusesForeignFilesAndVersions)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	write_small(path, make_events(2));
	std::string bytes = read_file_text(path);
	trace_reader *r = nullptr;

	std::string bad = bytes;
	bad[0] = 'X';
	spit(path, bad);
	EXPECT_EQ(trace_reader_open(&r, path.c_str()), -1);
	EXPECT_NE(strstr(et_last_error(), "bad magic"), nullptr);

	bad = bytes;
	bad[8] = 9;
	spit(path, bad);
	EXPECT_EQ(trace_reader_open(&r, path.c_str()), -1);
	EXPECT_NE(strstr(et_last_error(), "version 9 is not supported"), nullptr);

	// Version 1 (calls only) files are still read.
	bad = bytes;
	bad[8] = 1;
	spit(path, bad);
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	EXPECT_EQ(trace_reader_info(r)->version, 1u);
	trace_reader_close(r);
	bad[8] = 0;
	spit(path, bad);
	EXPECT_EQ(trace_reader_open(&r, path.c_str()), -1);

	EXPECT_EQ(trace_reader_open(&r, d.file("missing").c_str()), -1);
	EXPECT_NE(strstr(et_last_error(), "cannot open trace file"), nullptr);
}

// A record with a valid CRC but a hostile payload.
std::string record(uint32_t type, const std::string &payload, uint32_t len_field = UINT32_MAX)
{
	std::string r(8, '\0');
	uint32_t len = len_field == UINT32_MAX ? (uint32_t)payload.size() : len_field;
	memcpy(&r[0], &type, 4);
	memcpy(&r[4], &len, 4);
	r += payload;
	uint32_t crc = (uint32_t)crc32(0, (const Bytef *)r.data(), (uInt)r.size());
	r.append((const char *)&crc, 4);
	return r;
}

std::string file_header()
{
	std::string h("ETTRACE\0", 8);
	uint32_t v = 1, hl = 16;
	h.append((const char *)&v, 4);
	h.append((const char *)&hl, 4);
	return h;
}

TEST(TraceFile, HostilePayloadsAreRefused)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	trace_reader *r = nullptr;
	struct {
		std::string rec;
		const char *msg;
	} cases[] = {
		{ record(TRACE_REC_SYMBOLS, std::string("\xff\xff\xff\x0f", 4) + std::string(40, 'a')),
		  "SYMBOLS count" },
		{ record(TRACE_REC_SYMBOLS, std::string("\x01\0\0\0", 4) + std::string(18, '\0') +
						    std::string("\xff\x7f", 2) + "abc"),
		  "SYMBOLS name" },
		{ record(TRACE_REC_META, std::string(16, '\0') + std::string("\xff\x00", 2)),
		  "META string" },
		{ record(TRACE_REC_EVENTS, std::string(33, '\0')), "whole number of events" },
		{ record(TRACE_REC_MARK, std::string(3, '\0')), "too short" },
		{ record(TRACE_REC_END, std::string(31, '\0')), "too short" },
	};
	for (auto &c : cases) {
		spit(path, file_header() + record(TRACE_REC_MARK, std::string(16, '\0') + "ok") +
				   c.rec);
		EXPECT_EQ(trace_reader_open(&r, path.c_str()), -1) << c.msg;
		std::string msg = et_last_error();
		EXPECT_NE(msg.find(c.msg), std::string::npos) << msg;
		EXPECT_NE(msg.find("offset 46"), std::string::npos) << msg;
	}
	// A length beyond any sane record is corruption, not truncation.
	spit(path, file_header() + record(TRACE_REC_EVENTS, "", 0xfffffff0u));
	EXPECT_EQ(trace_reader_open(&r, path.c_str()), -1);
	EXPECT_NE(strstr(et_last_error(), "too large"), nullptr);

	// Unknown record types are skipped; text is made printable.
	spit(path, file_header() + record(77, "future") +
			   record(TRACE_REC_MARK, std::string(16, '\0') + "a\nb\x1b\xff"));
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	EXPECT_STREQ(trace_reader_info(r)->last_mark, "a?b??");
	trace_reader_close(r);
}

uint32_t u32_at(const std::string &b, size_t off)
{
	uint32_t v;
	memcpy(&v, b.data() + off, 4);
	return v;
}

// One record of the undamaged file.
struct OriginalRecord {
	uint64_t end;
	uint32_t type;
	std::vector<et_ring_record> events;
};

// What the reader must make of a damaged copy of a valid file, worked out
// from where the damage is. A random change passes CRC-32 once in 2^32
// tries, so the only records that can be read are the original ones,
// byte for byte at their own offsets; the first record that is not one
// ends the reading by the framing rules of docs/trace-format.md: the file
// ends inside it (truncated, not an error), its length is over the limit,
// or its CRC does not match.
struct Verdict {
	std::string error; // a part of the one-line error; "" when the file must open
	std::vector<uint64_t> records; // offsets of the records read
	bool truncated = false;
	uint64_t truncated_at = 0;
};

Verdict expected_verdict(const std::string &orig, const std::map<uint64_t, OriginalRecord> &recs,
			 const std::string &b)
{
	Verdict v;
	if (b.size() < TRACE_FILE_HEADER_SIZE) {
		v.error = "not an earlytrace trace file (too short)";
		return v;
	}
	if (memcmp(b.data(), TRACE_FILE_MAGIC, 8)) {
		v.error = "not an earlytrace trace file (bad magic)";
		return v;
	}
	uint32_t version = u32_at(b, 8), hlen = u32_at(b, 12);
	if (version < TRACE_FILE_MIN_VERSION || version > TRACE_FILE_VERSION) {
		v.error = "trace file version " + std::to_string(version) + " is not supported";
		return v;
	}
	if (hlen < TRACE_FILE_HEADER_SIZE || hlen > 4096 || hlen > b.size()) {
		v.error = "corrupt trace file header (header length " + std::to_string(hlen) + ")";
		return v;
	}
	for (uint64_t off = hlen; off < b.size();) {
		auto it = recs.find(off);
		if (it != recs.end() && it->second.end <= b.size() &&
		    !b.compare(off, it->second.end - off, orig, off, it->second.end - off)) {
			v.records.push_back(off);
			off = it->second.end;
			continue;
		}
		const std::string at = "record at offset " + std::to_string(off);
		uint32_t len = b.size() - off >= 8 ? u32_at(b, off + 4) : 0;
		if (b.size() - off >= 8 && len > TRACE_MAX_PAYLOAD) {
			v.error = at + " is corrupt: payload length too large";
		} else if (b.size() - off < 8 || b.size() - off - 8 < (uint64_t)len + 4) {
			v.truncated = true;
			v.truncated_at = off;
		} else {
			v.error = "CRC mismatch in " + at + " (";
		}
		return v;
	}
	return v;
}

// The outcome's kind, for counting which ones the flips reached.
std::string verdict_kind(const Verdict &v)
{
	if (v.error.empty())
		return v.truncated ? "read, truncated" : "read";
	for (const char *k : { "too short", "bad magic", "version", "header length",
			       "too large", "CRC mismatch" })
		if (v.error.find(k) != std::string::npos)
			return k;
	return v.error;
}

// Flips 1 to 4 random bytes of a valid file, and cuts a quarter of the
// copies short too, then checks the reader against expected_verdict(): a
// clean one-line error of the right kind naming the right offset, or
// exactly the intact records with their events. Accepting a damaged
// record, or refusing an intact file, fails.
TEST(TraceFile, RandomByteFlipsAreCaughtWhereTheyLand)
{
	TempDir d;
	std::string path = d.file("t.ettrace"), fuzz = d.file("f.ettrace");
	write_small(path, make_events(12));
	const std::string bytes = read_file_text(path);

	// The undamaged file's records, as the reader gives them.
	std::map<uint64_t, OriginalRecord> recs;
	trace_reader *r = nullptr;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	trace_record rec;
	while (trace_reader_next(r, &rec) > 0)
		recs[rec.offset] = { rec.offset + TRACE_RECORD_OVERHEAD + rec.len, rec.type,
				     std::vector<et_ring_record>(rec.events,
								 rec.events + rec.nr_events) };
	trace_reader_close(r);
	ASSERT_EQ(recs.size(), 7u); // META SYMBOLS EVENTS DROPS MARK EVENTS END

	std::mt19937 rng(12345);
	std::map<std::string, int> kinds;
	for (int iter = 0; iter < 1500; iter++) {
		std::string b = bytes;
		int flips = 1 + (int)(rng() % 4);
		for (int i = 0; i < flips; i++)
			b[rng() % b.size()] ^= (char)(1 + rng() % 255);
		if (rng() % 4 == 0)
			b.resize(rng() % b.size());
		spit(fuzz, b);
		const Verdict want = expected_verdict(bytes, recs, b);
		kinds[verdict_kind(want)]++;
		SCOPED_TRACE("iteration " + std::to_string(iter) + ", expected: " +
			     (want.error.empty() ? verdict_kind(want) : want.error));

		r = nullptr;
		int ret = trace_reader_open(&r, fuzz.c_str());
		if (!want.error.empty()) {
			ASSERT_EQ(ret, -1) << "a damaged file was accepted";
			std::string msg = et_last_error();
			EXPECT_NE(msg.find(want.error), std::string::npos) << msg;
			EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
			continue;
		}
		ASSERT_EQ(ret, 0) << et_last_error();
		const trace_info *in = trace_reader_info(r);
		EXPECT_EQ(in->truncated, want.truncated);
		if (want.truncated) {
			EXPECT_EQ(in->truncated_at, want.truncated_at);
		}
		EXPECT_EQ(in->nr_records, want.records.size());

		std::vector<uint64_t> got_records;
		std::vector<et_ring_record> got_events, want_events;
		bool meta = false, end = false;
		while ((ret = trace_reader_next(r, &rec)) > 0) {
			got_records.push_back(rec.offset);
			got_events.insert(got_events.end(), rec.events, rec.events + rec.nr_events);
		}
		EXPECT_EQ(ret, 0) << et_last_error();
		EXPECT_EQ(got_records, want.records);
		for (uint64_t off : want.records) {
			const OriginalRecord &o = recs.at(off);
			want_events.insert(want_events.end(), o.events.begin(), o.events.end());
			meta |= o.type == TRACE_REC_META;
			end |= o.type == TRACE_REC_END;
		}
		EXPECT_EQ(in->has_meta, meta);
		EXPECT_EQ(in->has_end, end);
		ASSERT_EQ(got_events.size(), want_events.size());
		for (size_t i = 0; i < got_events.size(); i++)
			EXPECT_TRUE(same(got_events[i], want_events[i])) << "event " << i;
		all_reports(r);
		trace_reader_close(r);
	}
	// The flips reached every outcome: cut files read, and each kind of
	// refusal. (A whole file read back is rare: only a flip of the version
	// to 1, or flips that the cut removed, leave one.)
	for (const char *k : { "read, truncated", "too short", "bad magic", "version",
			       "header length", "CRC mismatch" })
		EXPECT_GT(kinds[k], 0) << k;
}

// Writes batches of events until the disk fills; checks that what the
// file holds plus what the writer counts as lost is everything.
struct FillResult {
	uint64_t offered = 0, written = 0, lost = 0;
	int failures = 0;
	char msg[256] = "";
};

FillResult fill(const std::string &path, size_t batches, size_t per_batch)
{
	FillResult res;
	trace_writer *w = nullptr;
	trace_meta m = test_meta();
	if (trace_writer_open(&w, path.c_str(), &m)) {
		snprintf(res.msg, sizeof(res.msg), "open: %s", et_last_error());
		res.failures = -1;
		return res;
	}
	trace_writer_symbols(w, &test_tab);
	auto e = make_events(per_batch);
	auto failed = [&res]() {
		if (!res.failures++)
			snprintf(res.msg, sizeof(res.msg), "%s", et_last_error());
	};
	for (size_t i = 0; i < batches; i++) {
		if (trace_writer_events(w, e.data(), e.size()))
			failed();
		res.offered += e.size();
		if (i % 16 == 0 && trace_writer_mark(w, i, "progress"))
			failed();
	}
	res.written = trace_writer_written(w);
	res.lost = trace_writer_lost(w);
	if (trace_writer_close(w, res.offered, 0, "disk full test"))
		failed();
	return res;
}

void check_filled(const std::string &path, const FillResult &res)
{
	EXPECT_EQ(res.failures, 1) << "the failure is reported exactly once";
	EXPECT_EQ(res.written + res.lost, res.offered);
	EXPECT_GT(res.lost, 0u);
	trace_reader *r = nullptr;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(r);
	EXPECT_FALSE(in->truncated) << "partial records are cut back";
	EXPECT_EQ(in->nr_events, res.written);
	if (in->has_end) {
		EXPECT_EQ(in->end_lost, res.lost);
		EXPECT_EQ(in->end_written, res.written);
	}
	EXPECT_EQ(read_events(r).size(), res.written);
	trace_reader_close(r);
}

TEST(TraceFile, DiskFullOnTmpfs)
{
	TempDir d;
	std::string mnt = d.file("mnt");
	ASSERT_EQ(mkdir(mnt.c_str(), 0700), 0);
	if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k"))
		GTEST_SKIP() << "cannot mount a tmpfs: " << strerror(errno);
	std::string path = mnt + "/t.ettrace";
	FillResult res = fill(path, 200, 100); // 640 KB of events into 64 KB
	EXPECT_NE(strstr(res.msg, "No space left on device"), nullptr) << res.msg;
	EXPECT_NE(strstr(res.msg, "counted, not stored"), nullptr) << res.msg;
	check_filled(path, res);
	umount(mnt.c_str());
}

TEST(TraceFile, FileSizeLimitGivesEfbig)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	int pipefd[2];
	ASSERT_EQ(pipe(pipefd), 0);
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct rlimit rl = { 50000, 50000 };
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		FillResult res = fill(path, 100, 37);
		(void)!write(pipefd[1], &res, sizeof(res));
		_exit(0);
	}
	close(pipefd[1]);
	FillResult res;
	ASSERT_EQ(read(pipefd[0], &res, sizeof(res)), (ssize_t)sizeof(res));
	close(pipefd[0]);
	int st;
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_NE(strstr(res.msg, "File too large"), nullptr) << res.msg;
	struct stat sb;
	ASSERT_EQ(stat(path.c_str(), &sb), 0);
	EXPECT_LE(sb.st_size, 50000);
	check_filled(path, res);
}

} // namespace

// OVERHEAD: the writer's record (64 bytes, with the host thread's wait)
// reads back whole, and a record from before the wait was added (48
// bytes) still reads, the wait then unknown.
TEST(TraceFile, OverheadRecordOldAndNew)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	trace_reader *r = nullptr;
	trace_writer *w = nullptr;
	trace_meta m = test_meta();
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), &m), 0) << et_last_error();
	trace_overhead o{ 5000, 4, 240, 1, 90, 40, 123456, TRACE_OVERHEAD_WAITED_KNOWN };
	ASSERT_EQ(trace_writer_overhead(w, &o), 0);
	ASSERT_EQ(trace_writer_close(w, 0, 0, "guest exited (0)"), 0);
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(r);
	ASSERT_TRUE(in->has_overhead);
	EXPECT_EQ(in->overhead.exits, 4u);
	EXPECT_EQ(in->overhead.rest_ticks, 40u);
	EXPECT_EQ(in->overhead.waited_ticks, 123456u);
	EXPECT_EQ(in->overhead.flags, (uint64_t)TRACE_OVERHEAD_WAITED_KNOWN);
	trace_reader_close(r);

	std::string v1;
	for (uint64_t x : { 5000ull, 4ull, 240ull, 1ull, 90ull, 40ull })
		v1.append((const char *)&x, 8);
	ASSERT_EQ(v1.size(), (size_t)TRACE_OVERHEAD_LEN_V1);
	spit(path, file_header() + record(TRACE_REC_OVERHEAD, v1));
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	in = trace_reader_info(r);
	ASSERT_TRUE(in->has_overhead);
	EXPECT_EQ(in->overhead.exit_ticks, 240u);
	EXPECT_EQ(in->overhead.rest_ticks, 40u);
	EXPECT_EQ(in->overhead.waited_ticks, 0u);
	EXPECT_EQ(in->overhead.flags, 0u);
	trace_reader_close(r);

	spit(path, file_header() + record(TRACE_REC_OVERHEAD, v1.substr(0, 40)));
	EXPECT_EQ(trace_reader_open(&r, path.c_str()), -1);
	EXPECT_NE(strstr(et_last_error(), "OVERHEAD record too short"), nullptr) << et_last_error();
}

// WAIT: the writer's records read back in TSC order (with several vCPUs
// they reach the file in the order the exits were handled), their ticks
// summed; a short one is refused naming its kind.
TEST(TraceFile, WaitRecordsReadBackInTscOrder)
{
	TempDir d;
	std::string path = d.file("t.ettrace");
	trace_reader *r = nullptr;
	trace_writer *w = nullptr;
	trace_meta m = test_meta();
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), &m), 0) << et_last_error();
	const trace_wait waits[] = { { 9000, 1, 70 }, { 5000, 0, 300 }, { 7000, 0, 20 } };
	for (const auto &x : waits)
		ASSERT_EQ(trace_writer_wait(w, &x), 0);
	ASSERT_EQ(trace_writer_close(w, 0, 0, "guest exited (0)"), 0);
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(r);
	ASSERT_EQ(in->nr_waits, 3u);
	EXPECT_EQ(in->waits_ticks, 390u);
	EXPECT_EQ(in->waits[0].tsc, 5000u);
	EXPECT_EQ(in->waits[0].ticks, 300u);
	EXPECT_EQ(in->waits[1].tsc, 7000u);
	EXPECT_EQ(in->waits[2].cpu, 1u);
	EXPECT_EQ(in->waits[2].ticks, 70u);
	trace_reader_close(r);

	std::string shortrec(16, '\0');
	spit(path, file_header() + record(TRACE_REC_WAIT, shortrec));
	EXPECT_EQ(trace_reader_open(&r, path.c_str()), -1);
	EXPECT_NE(strstr(et_last_error(), "WAIT record too short"), nullptr) << et_last_error();
}
