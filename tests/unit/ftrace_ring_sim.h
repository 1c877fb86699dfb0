// SPDX-License-Identifier: MIT
// Test helpers for vmm/ftrace/: the Debian 6.1 layout from the committed
// BTF fixture, synthetic guest memory, and a ring buffer that a small
// model of the kernel's writer (kernel/trace/ring_buffer.c, 6.1) fills
// with the real layout's structs, so the reader meets what it would meet
// in a guest: pages in a ring with the HEAD flag, page-end padding, time
// extends, overwrite with the overrun counted, a consuming reader (as
// ftrace_dump at a panic) swapping and recycling pages.
#ifndef TESTS_UNIT_FTRACE_RING_SIM_H
#define TESTS_UNIT_FTRACE_RING_SIM_H

#include <cstdint>
#include <string>
#include <vector>

#include "vmm/ftrace/layout.h"
#include "vmm/ftrace/ring_reader.h"

// The committed fixture (tests/fixtures/ftrace-6.1.0-56-cloud-amd64.btf).
std::string ftrace_fixture_path();
// Its layout; fails the test if it does not parse.
ftrace_layout fixture_layout();

// Guest memory: one contiguous range of virtual addresses; reads outside
// it fail, like memory outside the guest's RAM.
struct SynthMem {
	static constexpr uint64_t kBase = 0xffff888000000000ull;
	std::vector<uint8_t> bytes;
	uint64_t used = 0;
	uint64_t reads = 0;

	explicit SynthMem(size_t size = 8u << 20) : bytes(size) {}
	uint64_t alloc(size_t size, size_t align = 8);
	uint8_t *at(uint64_t va, size_t len);
	void put(uint64_t va, uint64_t value, size_t size);
	void put(uint64_t va, ftrace_field f, uint64_t value) { put(va + f.offset, value, f.size); }
	uint64_t get(uint64_t va, size_t size);
	uint64_t get(uint64_t va, ftrace_field f) { return get(va + f.offset, f.size); }
	// A NUL-terminated string in memory; its address.
	uint64_t str(const std::string &s);
	static int read(void *ctx, uint64_t va, void *buf, size_t len);
	static int write(void *ctx, uint64_t va, const void *buf, size_t len);
};

// What a test expects back: one event as written.
struct SimEvent {
	uint32_t cpu;
	uint64_t ts;
	std::vector<uint8_t> payload;
};

class RingSim {
public:
	// ncpus buffers of nr_pages pages each; overwrite as the kernel's default.
	RingSim(SynthMem &mem, const ftrace_layout &L, int ncpus, int nr_pages, bool overwrite = true);

	uint64_t global_trace() const { return global_trace_; }
	const ftrace_layout &layout() const { return L_; }

	// Payloads as trace_entries.h lays them out (through the layout).
	std::vector<uint8_t> fn(uint64_t ip, uint64_t parent, int32_t pid = 1) const;
	std::vector<uint8_t> graph_entry(uint64_t func, int32_t depth) const;
	std::vector<uint8_t> graph_return(uint64_t func, int32_t depth, uint64_t calltime,
					  uint64_t rettime, uint32_t overrun = 0) const;
	std::vector<uint8_t> print(uint64_t ip, const std::string &text) const;
	std::vector<uint8_t> bprint(uint64_t ip, uint64_t fmt, const std::vector<uint8_t> &args) const;
	std::vector<uint8_t> bputs(uint64_t ip, uint64_t str) const;
	std::vector<uint8_t> raw(uint16_t type, size_t len) const;

	// The kernel's writer: true if written (false: dropped, buffer full
	// without overwrite). Every written event is remembered in written().
	bool write(int cpu, uint64_t ts, const std::vector<uint8_t> &payload);
	// A stopped vCPU in the middle of a commit: the event's bytes are
	// written and counted in `entries` but commit has not moved and
	// `committing` is 1; end_commit() finishes it.
	void begin_commit(int cpu, uint64_t ts, const std::vector<uint8_t> &payload);
	void end_commit(int cpu);
	// A discarded event (rb_event_discard) of n data bytes.
	void discard(int cpu, uint64_t ts, size_t n);
	// The kernel's consuming reader until the buffer is empty, as
	// ftrace_dump does at a panic (rb_get_reader_page, rb_advance_reader).
	void consume_all(int cpu);
	// The kernel emptying the buffer (tracing_reset_cpu: rb_reset_cpu).
	void reset(int cpu);
	// Takes the state of cpu's ring from guest memory, as someone else
	// (vmm/ftrace/ring_fill.c) left it, so that write() goes on after it
	// as the kernel's writer would: the tail and head pages, the tail's
	// write index, the counters, write_stamp.
	void adopt(int cpu);

	const std::vector<SimEvent> &written() const { return written_; }
	// Events written on cpu from index `from` of written() on.
	std::vector<SimEvent> written_on(int cpu, size_t from = 0) const;

	// Addresses, for tests that corrupt the structures.
	uint64_t cpu_buffer(int cpu) const { return cpus_[cpu].addr; }
	uint64_t ring_page(int cpu, int pos) const; // pos from the head
	uint64_t data_page(uint64_t bpage) const;
	uint64_t buffer() const { return buffer_; }
	uint64_t entries(int cpu) const { return cpus_[cpu].entries; }
	uint64_t overrun(int cpu) const { return cpus_[cpu].overrun; }
	int nr_pages() const { return nr_pages_; }
	uint32_t page_capacity() const;
	uint32_t tail_offset(int cpu) const { return cpus_[cpu].tail_write; }

private:
	struct Cpu {
		uint64_t addr = 0;
		std::vector<uint64_t> ring; // buffer_page addresses in ring order
		size_t head = 0, tail = 0;  // positions in ring
		uint64_t reader = 0;
		uint32_t tail_write = 0;
		uint64_t write_stamp = 0;
		size_t head_field = 0;	    // where cpu_buffer->head_page points (it lags
					    // the real head: only readers and resets move it)
		bool tail_on_reader = false; // a consumer swapped the commit page out
		uint64_t entries = 0, overrun = 0, dropped = 0, read = 0;
		uint64_t committing = 0;
		uint32_t pending = 0; // bytes written but not committed (begin_commit)
	};
	SynthMem &mem_;
	ftrace_layout L_;
	int nr_pages_;
	bool overwrite_;
	uint64_t global_trace_ = 0, buffer_ = 0;
	std::vector<Cpu> cpus_;
	std::vector<SimEvent> written_;

	uint64_t new_page();
	void link(Cpu &c);
	void sync(int cpu);
	uint32_t commit_of(uint64_t bpage);
	void set_commit(uint64_t bpage, uint32_t commit);
	uint32_t page_events(uint64_t bpage);
	bool move_tail(int cpu, uint64_t ts);
	void put_record(uint64_t data, uint32_t off, uint32_t type_len, uint32_t delta,
			const std::vector<uint8_t> &body, uint32_t array0, bool with_array0);
	uint32_t record_size(size_t payload) const;
	void put_event(int cpu, uint64_t delta, const std::vector<uint8_t> &payload);
};

// Collects what a reader hands over.
struct Collected {
	std::vector<ftrace_event> events; // payload/text pointers cleared
	std::vector<std::vector<uint8_t>> payloads;
	std::vector<std::string> texts;
	std::vector<ftrace_drops> drops;
	std::vector<std::pair<int, std::string>> warnings;
	int stop_after = -1; // >= 0: the sink refuses the event after this many

	ftrace_sink sink();
	void clear() { *this = Collected(); }
	// The events of one CPU, as SimEvents.
	std::vector<SimEvent> on(int cpu) const;
	uint64_t overwritten(int cpu) const;
};

#endif // TESTS_UNIT_FTRACE_RING_SIM_H
