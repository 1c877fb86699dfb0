// SPDX-License-Identifier: MIT
#include "tests/unit/ftrace_ring_sim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "tests/fixtures.h"
#include "vmm/util/error.h"
#include "vmm/ftrace/ring_page.h"
#include "vmm/ftrace/ring_walk.h"

namespace {

constexpr uint32_t kPageSize = 4096;
constexpr uint32_t kTsShift = 27;
constexpr uint32_t kMaxSmallData = 28 * 4; // RB_MAX_SMALL_DATA

uint32_t end_of(const ftrace_field &f) { return f.offset + f.size; }

} // namespace

std::string ftrace_fixture_path()
{
	return std::string(ET_TEST_SRCDIR) + "/fixtures/ftrace-6.1.0-56-cloud-amd64.btf";
}

ftrace_layout fixture_layout()
{
	ftrace_layout L;
	std::vector<uint8_t> btf = read_file_bytes(ftrace_fixture_path());
	EXPECT_FALSE(btf.empty()) << ftrace_fixture_path();
	EXPECT_EQ(ftrace_layout_from_btf(&L, btf.data(), btf.size()), 0) << et_last_error();
	return L;
}

// ---- SynthMem ------------------------------------------------------------

uint64_t SynthMem::alloc(size_t size, size_t align)
{
	uint64_t off = (used + align - 1) / align * align;
	EXPECT_LE(off + size, bytes.size()) << "synthetic memory full";
	used = off + size;
	return kBase + off;
}

uint8_t *SynthMem::at(uint64_t va, size_t len)
{
	EXPECT_TRUE(va >= kBase && va - kBase + len <= bytes.size()) << std::hex << va;
	return bytes.data() + (va - kBase);
}

void SynthMem::put(uint64_t va, uint64_t value, size_t size)
{
	memcpy(at(va, size), &value, size);
}

uint64_t SynthMem::get(uint64_t va, size_t size)
{
	uint64_t v = 0;
	memcpy(&v, at(va, size), size);
	return v;
}

uint64_t SynthMem::str(const std::string &s)
{
	uint64_t va = alloc(s.size() + 1, 1);
	memcpy(at(va, s.size() + 1), s.c_str(), s.size() + 1);
	return va;
}

int SynthMem::read(void *ctx, uint64_t va, void *buf, size_t len)
{
	SynthMem *m = static_cast<SynthMem *>(ctx);
	m->reads++;
	if (va < kBase || va - kBase > m->bytes.size() || len > m->bytes.size() - (va - kBase))
		return -1;
	memcpy(buf, m->bytes.data() + (va - kBase), len);
	return 0;
}

int SynthMem::write(void *ctx, uint64_t va, const void *buf, size_t len)
{
	SynthMem *m = static_cast<SynthMem *>(ctx);
	if (va < kBase || va - kBase > m->bytes.size() || len > m->bytes.size() - (va - kBase))
		return -1;
	memcpy(m->bytes.data() + (va - kBase), buf, len);
	return 0;
}

// ---- RingSim: structures -------------------------------------------------

RingSim::RingSim(SynthMem &mem, const ftrace_layout &L, int ncpus, int nr_pages, bool overwrite)
	: mem_(mem), L_(L), nr_pages_(nr_pages), overwrite_(overwrite), cpus_(ncpus)
{
	global_trace_ = mem_.alloc(8192);
	buffer_ = mem_.alloc(256);
	uint64_t buffers = mem_.alloc(8 * ncpus);
	mem_.put(global_trace_, L_.trace_array.buffer, buffer_);
	mem_.put(buffer_, L_.trace_buffer.cpus, (uint64_t)ncpus);
	mem_.put(buffer_, L_.trace_buffer.buffers, buffers);
	if (L_.fill.buffer_flags.size) // RB_FL_OVERWRITE
		mem_.put(buffer_, L_.fill.buffer_flags, overwrite ? 1 : 0);
	for (int cpu = 0; cpu < ncpus; cpu++) {
		Cpu &c = cpus_[cpu];
		c.addr = mem_.alloc(L_.cpu_buffer.size);
		mem_.put(buffers + 8 * cpu, c.addr, 8);
		for (int i = 0; i < nr_pages; i++)
			c.ring.push_back(new_page());
		c.reader = new_page();
		link(c);
		sync(cpu);
	}
}

uint64_t RingSim::new_page()
{
	uint64_t bpage = mem_.alloc(L_.buffer_page.size);
	uint64_t data = mem_.alloc(kPageSize, kPageSize);
	mem_.put(bpage, L_.buffer_page.page, data);
	return bpage;
}

uint64_t RingSim::data_page(uint64_t bpage) const
{
	return const_cast<SynthMem &>(mem_).get(bpage, L_.buffer_page.page);
}

uint32_t RingSim::page_capacity() const { return kPageSize - L_.data_page.data.offset; }

uint64_t RingSim::ring_page(int cpu, int pos) const
{
	const Cpu &c = cpus_[cpu];
	return c.ring[(c.head + pos) % c.ring.size()];
}

// The list pointers of the ring, with RB_PAGE_HEAD on the one to the head.
void RingSim::link(Cpu &c)
{
	size_t n = c.ring.size();
	uint64_t next_off = L_.buffer_page.list.offset + L_.list_head.next.offset;
	uint64_t prev_off = L_.buffer_page.list.offset + L_.list_head.prev.offset;

	for (size_t i = 0; i < n; i++) {
		size_t nx = (i + 1) % n;
		uint64_t next = c.ring[nx] + L_.buffer_page.list.offset;
		if (nx == c.head)
			next |= RB_PAGE_HEAD;
		mem_.put(c.ring[i] + next_off, next, 8);
		mem_.put(c.ring[i] + prev_off, c.ring[(i + n - 1) % n] + L_.buffer_page.list.offset, 8);
	}
}

uint32_t RingSim::commit_of(uint64_t bpage) { return (uint32_t)mem_.get(data_page(bpage), L_.data_page.commit); }

void RingSim::set_commit(uint64_t bpage, uint32_t commit)
{
	mem_.put(data_page(bpage), L_.data_page.commit, commit);
}

uint32_t RingSim::page_events(uint64_t bpage) { return (uint32_t)mem_.get(bpage, L_.buffer_page.entries); }

void RingSim::sync(int cpu)
{
	Cpu &c = cpus_[cpu];
	uint64_t a = c.addr;
	uint64_t tail = c.tail_on_reader ? c.reader : c.ring[c.tail];

	mem_.put(a, L_.cpu_buffer.cpu, (uint64_t)cpu);
	mem_.put(a, L_.cpu_buffer.nr_pages, (uint64_t)c.ring.size());
	mem_.put(a, L_.cpu_buffer.pages, c.ring[c.head_field] + L_.buffer_page.list.offset);
	mem_.put(a, L_.cpu_buffer.head_page, c.ring[c.head_field]);
	mem_.put(a, L_.cpu_buffer.tail_page, tail);
	mem_.put(a, L_.cpu_buffer.commit_page, tail);
	mem_.put(a, L_.cpu_buffer.reader_page, c.reader);
	mem_.put(a, L_.cpu_buffer.entries, c.entries);
	mem_.put(a, L_.cpu_buffer.overrun, c.overrun);
	mem_.put(a, L_.cpu_buffer.dropped_events, c.dropped);
	mem_.put(a, L_.cpu_buffer.commit_overrun, 0);
	mem_.put(a, L_.cpu_buffer.committing, c.committing);
	mem_.put(a, L_.cpu_buffer.read, c.read);
}

// ---- RingSim: payloads ---------------------------------------------------

namespace {

std::vector<uint8_t> entry_of(const ftrace_layout &L, int64_t type, size_t size, int32_t pid = 1)
{
	std::vector<uint8_t> p(std::max<size_t>(size, L.entry.size));
	uint16_t t = (uint16_t)type;
	memcpy(p.data() + L.entry.type.offset, &t, L.entry.type.size);
	p[L.entry.flags.offset] = 0x1;	       // irqs-off, as a test value
	p[L.entry.preempt_count.offset] = 0x2;
	memcpy(p.data() + L.entry.pid.offset, &pid, L.entry.pid.size);
	return p;
}

void set(std::vector<uint8_t> &p, const ftrace_field &f, uint64_t v)
{
	memcpy(p.data() + f.offset, &v, f.size);
}

} // namespace

std::vector<uint8_t> RingSim::fn(uint64_t ip, uint64_t parent, int32_t pid) const
{
	auto p = entry_of(L_, L_.type.fn, std::max(end_of(L_.fn.ip), end_of(L_.fn.parent_ip)), pid);
	set(p, L_.fn.ip, ip);
	set(p, L_.fn.parent_ip, parent);
	return p;
}

std::vector<uint8_t> RingSim::graph_entry(uint64_t func, int32_t depth) const
{
	auto p = entry_of(L_, L_.type.graph_ent,
			  std::max(end_of(L_.graph_ent.func), end_of(L_.graph_ent.depth)));
	set(p, L_.graph_ent.func, func);
	set(p, L_.graph_ent.depth, (uint32_t)depth);
	return p;
}

std::vector<uint8_t> RingSim::graph_return(uint64_t func, int32_t depth, uint64_t calltime,
					   uint64_t rettime, uint32_t overrun) const
{
	const auto &g = L_.graph_ret;
	size_t size = std::max({ end_of(g.func), end_of(g.depth), end_of(g.overrun),
				 end_of(g.calltime), end_of(g.rettime) });
	auto p = entry_of(L_, L_.type.graph_ret, size);
	set(p, g.func, func);
	set(p, g.depth, (uint32_t)depth);
	set(p, g.overrun, overrun);
	set(p, g.calltime, calltime);
	set(p, g.rettime, rettime);
	return p;
}

std::vector<uint8_t> RingSim::print(uint64_t ip, const std::string &text) const
{
	auto p = entry_of(L_, L_.type.print, L_.print.buf.offset + text.size() + 1);
	set(p, L_.print.ip, ip);
	memcpy(p.data() + L_.print.buf.offset, text.c_str(), text.size() + 1);
	return p;
}

std::vector<uint8_t> RingSim::bprint(uint64_t ip, uint64_t fmt, const std::vector<uint8_t> &args) const
{
	auto p = entry_of(L_, L_.type.bprint, L_.bprint.buf.offset + args.size());
	set(p, L_.bprint.ip, ip);
	set(p, L_.bprint.fmt, fmt);
	std::copy(args.begin(), args.end(), p.begin() + L_.bprint.buf.offset);
	return p;
}

std::vector<uint8_t> RingSim::bputs(uint64_t ip, uint64_t str) const
{
	auto p = entry_of(L_, L_.type.bputs, std::max(end_of(L_.bputs.ip), end_of(L_.bputs.str)));
	set(p, L_.bputs.ip, ip);
	set(p, L_.bputs.str, str);
	return p;
}

std::vector<uint8_t> RingSim::raw(uint16_t type, size_t len) const
{
	auto p = entry_of(L_, type, len);
	for (size_t i = L_.entry.size; i < p.size(); i++)
		p[i] = (uint8_t)(0xa0 + i);
	return p;
}

// ---- RingSim: the writer -------------------------------------------------

// Bytes a record takes for a payload (rb_calculate_event_length, x86-64).
uint32_t RingSim::record_size(size_t payload) const
{
	uint32_t aligned = (uint32_t)((std::max<size_t>(payload, 1) + 3) & ~size_t(3));
	return aligned <= kMaxSmallData ? 4 + aligned : 8 + aligned;
}

void RingSim::put_record(uint64_t data, uint32_t off, uint32_t type_len, uint32_t delta,
			 const std::vector<uint8_t> &body, uint32_t array0, bool with_array0)
{
	uint64_t at = data + L_.data_page.data.offset + off;
	mem_.put(at, (uint64_t)(type_len | (delta << 5)), 4);
	at += 4;
	if (with_array0) {
		mem_.put(at, array0, 4);
		at += 4;
	}
	if (!body.empty())
		memcpy(mem_.at(at, body.size()), body.data(), body.size());
}

// The event record itself at the tail (delta already decided).
void RingSim::put_event(int cpu, uint64_t delta, const std::vector<uint8_t> &payload)
{
	Cpu &c = cpus_[cpu];
	uint64_t data = data_page(c.ring[c.tail]);
	uint32_t size = record_size(payload.size());
	std::vector<uint8_t> body(payload);

	body.resize(size - (size - 4 <= kMaxSmallData ? 4 : 8), 0);
	if (size - 4 <= kMaxSmallData)
		put_record(data, c.tail_write, (size - 4) / 4, (uint32_t)delta, body, 0, false);
	else
		put_record(data, c.tail_write, 0, (uint32_t)delta, body, size - 4, true);
	c.tail_write += size;
	mem_.put(c.ring[c.tail], L_.buffer_page.entries, (uint64_t)page_events(c.ring[c.tail]) + 1);
}

// rb_move_tail: pads the rest of the tail page, then moves to the next
// page, pushing the head when the ring is full (overwrite) or refusing.
bool RingSim::move_tail(int cpu, uint64_t ts)
{
	Cpu &c = cpus_[cpu];
	uint64_t bpage = c.ring[c.tail], data = data_page(bpage);
	uint32_t cap = page_capacity(), rest = cap - c.tail_write;
	size_t next = (c.tail + 1) % c.ring.size();

	if (rest >= 8) { // a discarded event to the end: commit covers it
		put_record(data, c.tail_write, 29, 1, {}, rest - 4, true);
		set_commit(bpage, cap);
	} else if (rest >= 4) { // no room for one: null padding past commit
		put_record(data, c.tail_write, 29, 0, {}, 0, false);
	}
	// rb_reset_tail: where the padding starts; 0 for a page filled exactly.
	mem_.put(bpage, L_.buffer_page.real_end, rest ? c.tail_write : 0);
	if (next == c.head) {
		if (!overwrite_) {
			c.tail_write = cap; // full: every later write is dropped
			return false;
		}
		c.overrun += page_events(c.ring[c.head]);
		c.head = (c.head + 1) % c.ring.size();
	}
	c.tail = next;
	c.tail_write = 0;
	mem_.put(c.ring[next], L_.buffer_page.entries, 0);
	mem_.put(c.ring[next], L_.buffer_page.read, 0);
	set_commit(c.ring[next], 0);
	link(c);
	(void)ts;
	return true;
}

bool RingSim::write(int cpu, uint64_t ts, const std::vector<uint8_t> &payload)
{
	Cpu &c = cpus_[cpu];
	uint32_t size = record_size(payload.size());
	uint64_t delta;

	EXPECT_FALSE(c.tail_on_reader) << "the model does not write on the reader page";
	EXPECT_GE(ts, c.write_stamp) << "time runs forward per CPU";
	delta = c.tail_write ? ts - c.write_stamp : 0;
	if (c.tail_write + size + (delta >> kTsShift ? 8 : 0) > page_capacity()) {
		if (!move_tail(cpu, ts)) {
			c.dropped++;
			sync(cpu);
			return false;
		}
		delta = 0;
	}
	uint64_t bpage = c.ring[c.tail], data = data_page(bpage);
	if (c.tail_write == 0)
		mem_.put(data, L_.data_page.time_stamp, ts); // the first event's time
	if (delta >> kTsShift) { // TIME_EXTEND carries the delta; the event adds 0
		put_record(data, c.tail_write, 30, (uint32_t)(delta & ((1u << kTsShift) - 1)), {},
			   (uint32_t)(delta >> kTsShift), true);
		c.tail_write += 8;
		delta = 0;
	}
	put_event(cpu, delta, payload);
	set_commit(bpage, c.tail_write);
	c.entries++;
	c.write_stamp = ts;
	written_.push_back({ (uint32_t)cpu, ts, payload });
	sync(cpu);
	return true;
}

void RingSim::begin_commit(int cpu, uint64_t ts, const std::vector<uint8_t> &payload)
{
	Cpu &c = cpus_[cpu];
	uint32_t before = c.tail_write;

	ASSERT_LE(c.tail_write + record_size(payload.size()), page_capacity());
	ASSERT_NE(c.tail_write, 0u) << "begin_commit continues a started page";
	put_event(cpu, ts - c.write_stamp, payload);
	c.pending = c.tail_write - before;
	c.tail_write = before; // commit stays where it was
	c.entries++;	       // rb_commit() counts it before rb_end_commit()
	c.committing = 1;
	c.write_stamp = ts;
	written_.push_back({ (uint32_t)cpu, ts, payload });
	sync(cpu);
}

void RingSim::end_commit(int cpu)
{
	Cpu &c = cpus_[cpu];
	c.tail_write += c.pending;
	c.pending = 0;
	c.committing = 0;
	set_commit(c.ring[c.tail], c.tail_write);
	sync(cpu);
}

void RingSim::discard(int cpu, uint64_t ts, size_t n)
{
	Cpu &c = cpus_[cpu];
	uint32_t size = record_size(n);
	uint64_t bpage = c.ring[c.tail];

	ASSERT_NE(c.tail_write, 0u);
	ASSERT_LE(c.tail_write + size, page_capacity());
	// rb_event_discard(): padding of the same length with its own delta;
	// the writer's time stays at the event before it.
	put_record(data_page(bpage), c.tail_write, 29, (uint32_t)(ts - c.write_stamp), {},
		   size - 4, true);
	c.tail_write += size;
	set_commit(bpage, c.tail_write);
	sync(cpu);
}

// ---- RingSim: the kernel's own reader ------------------------------------

void RingSim::consume_all(int cpu)
{
	Cpu &c = cpus_[cpu];

	for (int loops = 0; loops < 4 * nr_pages_ + 4; loops++) {
		uint64_t r = c.reader;
		if (mem_.get(r, L_.buffer_page.read) < commit_of(r)) {
			// rb_advance_reader over the whole page
			c.read += page_events(r);
			mem_.put(r, L_.buffer_page.read, commit_of(r));
			continue;
		}
		if (c.tail_on_reader)
			break; // caught up with the writer
		if (c.entries - (c.overrun + c.read) == 0)
			break;
		// rb_get_reader_page: reset the old reader page, splice it in at
		// the head, and take the head as the new reader page.
		mem_.put(r, L_.buffer_page.entries, 0);
		mem_.put(r, L_.buffer_page.real_end, 0);
		set_commit(r, 0);
		uint64_t h = c.ring[c.head];
		bool was_tail = c.head == c.tail;
		c.ring[c.head] = r;
		c.reader = h;
		mem_.put(h, L_.buffer_page.read, 0);
		c.head = (c.head + 1) % c.ring.size();
		c.head_field = c.head;
		if (was_tail)
			c.tail_on_reader = true;
		link(c);
	}
	sync(cpu);
}

void RingSim::reset(int cpu)
{
	Cpu &c = cpus_[cpu];

	c.head_field = c.head;
	c.tail = c.head;
	c.tail_write = 0;
	c.tail_on_reader = false;
	for (uint64_t p : { c.ring[c.head], c.reader }) {
		mem_.put(p, L_.buffer_page.entries, 0);
		mem_.put(p, L_.buffer_page.read, 0);
		set_commit(p, 0);
	}
	c.entries = c.overrun = c.dropped = c.read = 0;
	c.write_stamp = 0;
	link(c);
	sync(cpu);
}

void RingSim::adopt(int cpu)
{
	Cpu &c = cpus_[cpu];
	uint64_t a = c.addr;
	uint64_t tail = mem_.get(a, L_.cpu_buffer.tail_page);
	uint64_t head = mem_.get(a, L_.cpu_buffer.head_page);
	auto pos = [&](uint64_t bpage) {
		auto it = std::find(c.ring.begin(), c.ring.end(), bpage);
		EXPECT_NE(it, c.ring.end()) << std::hex << bpage;
		return (size_t)(it - c.ring.begin());
	};

	c.tail = pos(tail);
	c.head = c.head_field = pos(head);
	c.tail_on_reader = false;
	c.tail_write = commit_of(tail);
	c.entries = mem_.get(a, L_.cpu_buffer.entries);
	c.overrun = mem_.get(a, L_.cpu_buffer.overrun);
	c.dropped = mem_.get(a, L_.cpu_buffer.dropped_events);
	c.read = mem_.get(a, L_.cpu_buffer.read);
	c.write_stamp = mem_.get(a, L_.fill.write_stamp);
}

std::vector<SimEvent> RingSim::written_on(int cpu, size_t from) const
{
	std::vector<SimEvent> out;
	for (size_t i = from; i < written_.size(); i++)
		if ((int)written_[i].cpu == cpu)
			out.push_back(written_[i]);
	return out;
}

// ---- Collected -----------------------------------------------------------

ftrace_sink Collected::sink()
{
	ftrace_sink s{};
	s.ctx = this;
	s.event = [](void *ctx, const ftrace_event *ev) -> int {
		Collected *c = static_cast<Collected *>(ctx);
		if (c->stop_after >= 0 && c->events.size() >= (size_t)c->stop_after)
			return 1;
		ftrace_event copy = *ev;
		c->payloads.emplace_back(ev->payload, ev->payload + ev->payload_len);
		c->texts.emplace_back(ev->text ? std::string(ev->text, ev->text_len) : std::string());
		copy.payload = nullptr;
		copy.text = nullptr;
		c->events.push_back(copy);
		return 0;
	};
	s.drops = [](void *ctx, const ftrace_drops *d) {
		static_cast<Collected *>(ctx)->drops.push_back(*d);
	};
	s.warning = [](void *ctx, int cpu, const char *msg) {
		static_cast<Collected *>(ctx)->warnings.emplace_back(cpu, msg);
	};
	return s;
}

std::vector<SimEvent> Collected::on(int cpu) const
{
	std::vector<SimEvent> out;
	for (size_t i = 0; i < events.size(); i++)
		if ((int)events[i].cpu == cpu)
			out.push_back({ events[i].cpu, events[i].ts, payloads[i] });
	return out;
}

uint64_t Collected::overwritten(int cpu) const
{
	uint64_t n = 0;
	for (const auto &d : drops)
		if ((int)d.cpu == cpu)
			n += d.overwritten;
	return n;
}
