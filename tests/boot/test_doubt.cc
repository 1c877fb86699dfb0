// SPDX-License-Identifier: MIT
// A reader that doubts what it should: records removed from the middle of
// a finished trace (every CRC valid), a second copy of the records after
// END, a file that shrinks between report's two passes. The reader
// compares what it read with END's count, reads nothing after END, and
// says so; `check`'s no-drops fails on such a file. docs/reliability.md,
// "Trace files that lie".
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

struct Pieces {
	std::vector<uint8_t> header;
	std::vector<std::vector<uint8_t>> records; // each whole: header, payload, CRC
};

uint32_t u32_at(const std::vector<uint8_t> &b, size_t at)
{
	uint32_t v;
	memcpy(&v, b.data() + at, 4);
	return v;
}

// The file cut at record boundaries (docs/trace-format.md).
Pieces split(const std::string &path)
{
	Pieces p;
	std::vector<uint8_t> b = read_file_bytes(path);
	size_t at = u32_at(b, 12);
	p.header.assign(b.begin(), b.begin() + (long)at);
	while (at + 8 <= b.size()) {
		size_t end = at + 8 + u32_at(b, at + 4) + 4;
		p.records.emplace_back(b.begin() + (long)at, b.begin() + (long)end);
		at = end;
	}
	return p;
}

uint32_t type_of(const std::vector<uint8_t> &rec)
{
	return u32_at(rec, 0);
}

void write_pieces(const std::string &path, const Pieces &p)
{
	std::ofstream f(path, std::ios::binary | std::ios::trunc);
	f.write((const char *)p.header.data(), (long)p.header.size());
	for (const auto &r : p.records)
		f.write((const char *)r.data(), (long)r.size());
}

std::string no_drops_file(const TempDir &d)
{
	std::string e = d.file("no-drops.expect");
	std::ofstream(e) << "no-drops\n";
	return e;
}

// Tamperings that leave every CRC valid, and what the reader makes of
// each: the events it reads, the doubt `report` warns of, and what the
// state line (the reader's and the summary's) says after "but".
struct Tampering {
	const char *name;
	void (*tamper)(Pieces &p);
	uint64_t events;
	const char *warned;
	const char *state;
};

// The second of four EVENTS records removed: its CRC-valid neighbours
// read fine, but END says 40 events were written and the file holds 30.
void remove_second_events_record(Pieces &p)
{
	size_t nth = 0;
	for (size_t i = 0; i < p.records.size(); i++)
		if (type_of(p.records[i]) == TRACE_REC_EVENTS && ++nth == 2) {
			p.records.erase(p.records.begin() + (long)i);
			break;
		}
	ASSERT_EQ(nth, 2u);
}

// A second copy of the records appended after END: not read (the events
// are not doubled), and said.
void repeat_records_after_end(Pieces &p)
{
	std::vector<std::vector<uint8_t>> once = p.records;
	p.records.insert(p.records.end(), once.begin(), once.end());
}

const Tampering tamperings[] = {
	{ "RecordsRemovedFromTheMiddle", remove_second_events_record, 30,
	  "the file holds 30 events before its END, which says 40 were written",
	  "but the file holds 30 events" },
	{ "RecordsRepeatedAfterEnd", repeat_records_after_end, 40,
	  "follow the END record (not read)", "follow the END record" },
};

// A failing case names its tampering, not its bytes.
void PrintTo(const Tampering &t, std::ostream *os)
{
	*os << t.name;
}

class TamperedFile : public ::testing::TestWithParam<Tampering> {};

} // namespace

// The reader reads the file as it is and says why it doubts it; `check`'s
// no-drops fails on it.
TEST_P(TamperedFile, IsDoubted)
{
	const Tampering &c = GetParam();
	TempDir d;
	std::string t = d.file("t.trace");
	write_small_trace(t);
	Pieces p = split(t);
	c.tamper(p);
	if (HasFatalFailure())
		return;
	write_pieces(t, p);

	TraceFile tf = load_trace(t);
	ASSERT_EQ(tf.error, "");
	EXPECT_EQ(tf.events, c.events);
	EXPECT_NE(tf.state.find(c.state), std::string::npos) << tf.state;
	VmmResult r = run_vmm({ "report", t, "--format", "summary" });
	expect_no_crash(r);
	EXPECT_NE(r.err.find(c.warned), std::string::npos) << r.err;
	EXPECT_NE(r.out.find(c.state), std::string::npos) << r.out;
	VmmResult ck = run_vmm({ "check", t, "--expect", no_drops_file(d) });
	expect_no_crash(ck);
	EXPECT_EQ(ck.status, 5) << ck.out << ck.err;
	EXPECT_NE(ck.out.find("not ok 1 no-drops"), std::string::npos) << ck.out;
	EXPECT_NE(ck.out.find("cannot be believed"), std::string::npos) << ck.out;
}

INSTANTIATE_TEST_SUITE_P(Doubt, TamperedFile, ::testing::ValuesIn(tamperings),
			 [](const ::testing::TestParamInfo<Tampering> &i) {
				 return std::string(i.param.name);
			 });

// The untouched file: no doubt, no-drops passes.
TEST(Doubt, AnIntactFileRaisesNone)
{
	TempDir d;
	std::string t = d.file("t.trace");
	write_small_trace(t);
	TraceFile tf = load_trace(t);
	EXPECT_EQ(tf.state, "finished: debug-exit port");
	VmmResult r = run_vmm({ "report", t, "--format", "summary" });
	EXPECT_EQ(r.status, 0);
	EXPECT_EQ(r.err, "");
	VmmResult c = run_vmm({ "check", t, "--expect", no_drops_file(d) });
	EXPECT_EQ(c.status, 0) << c.out << c.err;
}

// The file shrinks after the reader checked it (report's first pass) and
// before it reads the records again: an error, not a short output.
TEST(Doubt, FileShrinksBetweenPasses)
{
	TempDir d;
	std::string t = d.file("t.trace");
	write_small_trace(t, 40, 100);
	struct trace_reader *r = nullptr;
	ASSERT_EQ(trace_reader_open(&r, t.c_str()), 0) << et_last_error();
	ASSERT_EQ(truncate(t.c_str(), 2000), 0);
	struct trace_record rec;
	int ret;
	uint64_t events = 0;
	while ((ret = trace_reader_next(r, &rec)) == 1)
		events += rec.nr_events;
	EXPECT_EQ(ret, -1) << "read " << events << " events and stopped quietly";
	EXPECT_NE(std::string(et_last_error()).find("changed while it was read"), std::string::npos)
		<< et_last_error();
	trace_reader_close(r);
}

// The merge's second reader reads the file the first one has open, not
// whatever the name leads to now: `earlytrace trace` without -o removes
// its temporary file before printing it.
TEST(Doubt, SecondReaderFollowsTheOpenFileNotTheName)
{
	TempDir d;
	std::string t = d.file("t.trace");
	write_small_trace(t);
	struct trace_reader *r = nullptr, *dup = nullptr;
	ASSERT_EQ(trace_reader_open(&r, t.c_str()), 0) << et_last_error();
	ASSERT_EQ(unlink(t.c_str()), 0);
	uint64_t offset;
	size_t index;
	ASSERT_TRUE(trace_reader_run(r, 0, &offset, &index));
	ASSERT_EQ(trace_reader_dup(r, offset, &dup), 0) << et_last_error();
	struct trace_record rec;
	uint64_t events = 0;
	while (trace_reader_next(dup, &rec) == 1)
		events += rec.nr_events;
	EXPECT_EQ(events, 40u);
	trace_reader_close(dup);
	trace_reader_close(r);
}
