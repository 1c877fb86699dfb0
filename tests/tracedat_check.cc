// SPDX-License-Identifier: MIT
// trace.dat read by libtracecmd, and what earlytrace's own reading says it
// must hold (tracedat_check.h).
#include "tests/tracedat_check.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstring>

#include "tests/boot/vmm_process.h"
#include "tests/shim/earlytrace_shim.h"
#include "tests/tracedat_read.h"
extern "C" {
#include "vmm/report/report_util.h" // event_exit_text(), the exit in words
}

namespace {

void read_one(void *ctx, const dat_record *r)
{
	auto *file = static_cast<DatFile *>(ctx);
	DatEvent e;

	e.cpu = r->cpu;
	e.ts = r->ts;
	if (!r->name) {
		e.name = "?" + std::to_string(r->type);
		file->events.push_back(e);
		return;
	}
	e.system = r->system;
	e.name = r->name;
	e.flags = r->flags;
	for (size_t i = 0; i < r->nr_fields; i++) {
		const dat_field &f = r->fields[i];
		if (f.is_string) {
			e.str[f.name] = std::string(f.str, f.len);
			continue;
		}
		e.num[f.name] = f.value;
		if (!strcmp(f.name, "ip") || !strcmp(f.name, "parent_ip") || !strcmp(f.name, "func") ||
		    !strcmp(f.name, "rip"))
			e.sym[f.name] = f.function ? f.function : "";
	}
	file->events.push_back(e);
}

std::string symbol_name(const symtab *tab, uint64_t addr)
{
	const symbol *s = symtab_lookup(tab, addr, nullptr);
	return s ? s->name : "";
}

// kallsyms has no sizes: where earlytrace names nothing because a sized
// symbol ended before addr, a kallsyms reader names that symbol.
std::string gap_name(const symtab *tab, uint64_t addr)
{
	size_t lo = 0, hi = tab->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tab->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return "";
	const symbol *s = &tab->syms[lo - 1];
	while (s > tab->syms && (s - 1)->addr == s->addr)
		s--;
	return s->size && addr - s->addr >= s->size ? s->name : "";
}

void set_sym(DatEvent &e, const symtab *tab, const char *field, uint64_t addr)
{
	e.num[field] = addr;
	e.sym[field] = symbol_name(tab, addr);
	if (e.sym[field].empty())
		e.gap[field] = gap_name(tab, addr);
}

DatEvent note_event(const trace_note &n)
{
	DatEvent e;
	e.cpu = 0;
	e.tsc = n.tsc;
	e.system = "earlytrace";
	e.flags = 1;
	if (n.type == TRACE_REC_MARK) {
		e.name = "mark";
		e.str["text"] = n.text;
	} else {
		e.name = "drops";
		e.num["count"] = n.dropped;
		e.num["total"] = n.dropped_total;
		e.str["reason"] = n.text;
	}
	return e;
}

} // namespace

DatFile read_tracedat(const std::string &path)
{
	DatFile f;

	if (dat_read(path.c_str(), &f.cpus, read_one, &f))
		f.error = "libtracecmd cannot read " + path;
	else
		f.ok = true;
	return f;
}

DatExpect expect_tracedat(const std::string &etr)
{
	DatExpect x;
	trace_reader *r = nullptr;

	if (trace_reader_open(&r, etr.c_str())) {
		x.error = et_last_error();
		return x;
	}
	const trace_info *in = trace_reader_info(r);
	const symtab *tab = trace_reader_symtab(r);
	size_t nr_notes = 0, next_note = 0;
	const trace_note *notes = trace_reader_notes(r, &nr_notes);
	x.tsc_khz = in->tsc_khz;
	x.cpus = in->nr_cpus ? (int)std::min<uint32_t>(in->nr_cpus, 1024) : 1;

	uint64_t first = in->nr_events ? in->min_tsc : 0, last = in->nr_events ? in->max_tsc : 0;
	if (nr_notes) {
		if (!in->nr_events || notes[0].tsc < first)
			first = notes[0].tsc;
		if (!in->nr_events || notes[nr_notes - 1].tsc > last)
			last = notes[nr_notes - 1].tsc;
	}

	DatEvent run;
	run.tsc = first;
	run.system = "earlytrace";
	run.name = "run";
	run.flags = 1;
	run.num["tsc_khz"] = in->tsc_khz;
	run.num["start_time"] = in->start_time_ns;
	run.str["version"] = in->tool_version;
	run.str["kernel"] = in->kernel_path;
	run.str["build_id"] = in->build_id_hex[0] ? in->build_id_hex : "none";
	run.str["mode"] = in->mode;
	run.str["symbols"] = in->symbol_source;
	x.events.push_back(run);

	// Per CPU: the open traced calls (ip, index of the entry event).
	std::map<uint32_t, std::vector<std::pair<uint64_t, int>>> stacks;
	std::map<int, int> per_cpu; // events so far on each CPU
	per_cpu[0] = 1;		    // the run event
	auto push = [&](DatEvent e) {
		int i = per_cpu[e.cpu]++;
		x.events.push_back(e);
		return i;
	};

	trace_merge *m = nullptr;
	et_ring_record ev;
	int ret;
	if (trace_merge_open(r, &m)) {
		x.error = et_last_error();
		trace_reader_close(r);
		return x;
	}
	while ((ret = trace_merge_next(m, &ev)) > 0) {
		while (next_note < nr_notes && notes[next_note].tsc < ev.tsc)
			push(note_event(notes[next_note++]));
		DatEvent e;
		e.tsc = ev.tsc;
		e.cpu = (int)et_rec_cpu(&ev);
		if (e.cpu >= 1024)
			continue;
		e.system = "ftrace";
		e.flags = et_rec_is_exit(&ev) || (ev.flags & ET_REC_SRC_MASK) != ET_REC_SRC_GUEST;
		auto &stack = stacks[(uint32_t)e.cpu];
		if (et_rec_is_exit(&ev)) {
			et_exit xe = et_exit_unpack(&ev);
			char desc[192];
			e.system = "earlytrace";
			e.name = "vm_exit";
			set_sym(e, tab, "rip", ev.ip);
			e.num["addr"] = xe.addr;
			e.num["value"] = xe.value;
			e.num["kind"] = xe.kind;
			e.num["size"] = xe.size;
			e.num["write"] = xe.write;
			e.num["unclaimed"] = xe.unclaimed;
			e.str["desc"] = event_exit_text(&ev, desc, sizeof(desc));
			push(e);
		} else if (et_rec_kind(&ev) == ET_REC_RET) {
			e.name = "funcgraph_exit";
			set_sym(e, tab, "func", ev.ip);
			if (!stack.empty() && stack.back().first == ev.ip) {
				e.entry = stack.back().second;
				stack.pop_back();
			} else {
				x.unmatched++;
			}
			if (ev.flags & ET_REC_F_UNWOUND)
				x.unwound++;
			e.num["depth"] = stack.size();
			e.num["overrun"] = 0;
			push(e);
		} else if (ev.flags & ET_REC_F_RET_TRACED) {
			e.name = "funcgraph_entry";
			set_sym(e, tab, "func", ev.ip);
			e.num["depth"] = stack.size();
			if (ev.parent_ip)
				x.graph_parents++;
			stack.push_back({ ev.ip, push(e) });
		} else {
			e.name = "function";
			set_sym(e, tab, "ip", ev.ip);
			set_sym(e, tab, "parent_ip", ev.parent_ip);
			push(e);
		}
	}
	trace_merge_close(m);
	if (ret < 0) {
		x.error = et_last_error();
		trace_reader_close(r);
		return x;
	}
	while (next_note < nr_notes)
		push(note_event(notes[next_note++]));

	char state[512];
	DatEvent end;
	end.tsc = last;
	end.system = "earlytrace";
	end.name = "end";
	end.flags = 1;
	end.num["recorded"] = in->end_recorded;
	end.num["written"] = in->end_written;
	end.num["dropped"] = in->end_dropped;
	end.num["lost"] = in->end_lost;
	end.num["finished"] = in->has_end;
	end.str["reason"] = trace_reader_state(r, state, sizeof(state));
	x.events.push_back(end);
	trace_reader_close(r);
	x.ok = true;
	return x;
}

namespace {

std::string describe(const DatEvent &e)
{
	std::string s = e.system + ":" + e.name + " cpu " + std::to_string(e.cpu) + " ts " +
			std::to_string(e.ts) + " tsc " + std::to_string(e.tsc);
	for (auto &[k, v] : e.num)
		s += " " + k + "=" + std::to_string(v);
	for (auto &[k, v] : e.str)
		s += " " + k + "='" + v + "'";
	for (auto &[k, v] : e.sym)
		s += " " + k + "<" + v + ">";
	return s;
}

// Within the 32-bit multiplier's precision (tracedat_clock.h).
bool time_matches(uint64_t khz, uint64_t tsc, uint64_t ts)
{
	if (!khz)
		return ts == tsc;
	uint64_t exact = (uint64_t)((unsigned __int128)tsc * 1000000u / khz);
	uint64_t diff = ts > exact ? ts - exact : exact - ts;
	// The multiplier's rounding (under 1 part in 2^30), and 1 ns for each
	// of the two truncations (the reader's shift, the anchor's offset):
	// a guest TSC that starts near 0 (a fresh VM) leaves no slack of size.
	return diff <= (exact >> 30) + 2;
}

void compare_one(const DatExpect &want, const DatEvent &w, const DatEvent &g,
		 const std::vector<const DatEvent *> &got_cpu, size_t i)
{
	SCOPED_TRACE("event " + std::to_string(i) + " on CPU " + std::to_string(w.cpu) +
		     ": want " + describe(w) + "\n  got " + describe(g));
	EXPECT_EQ(g.system, w.system);
	EXPECT_EQ(g.name, w.name);
	EXPECT_EQ(g.flags, w.flags);
	EXPECT_TRUE(time_matches(want.tsc_khz, w.tsc, g.ts));
	for (auto &[k, v] : w.num) {
		auto it = g.num.find(k);
		ASSERT_NE(it, g.num.end()) << "no field " << k;
		EXPECT_EQ(it->second, v) << k;
	}
	for (auto &[k, v] : w.str) {
		auto it = g.str.find(k);
		ASSERT_NE(it, g.str.end()) << "no field " << k;
		EXPECT_EQ(it->second, v) << k;
	}
	for (auto &[k, v] : w.sym) {
		auto it = g.sym.find(k);
		ASSERT_NE(it, g.sym.end()) << "no name for " << k;
		if (v.empty() && w.gap.count(k))
			EXPECT_TRUE(it->second.empty() || it->second == w.gap.at(k)) << k;
		else
			EXPECT_EQ(it->second, v) << k;
	}
	if (w.name == "funcgraph_exit") {
		// Both times come from the same conversion as the records'.
		EXPECT_EQ(g.num.at("rettime"), g.ts);
		if (w.entry >= 0)
			EXPECT_EQ(g.num.at("calltime"), got_cpu.at((size_t)w.entry)->ts);
		else
			EXPECT_EQ(g.num.at("calltime"), g.num.at("rettime"));
	}
}

} // namespace

size_t compare_tracedat(const DatExpect &want, const DatFile &got)
{
	EXPECT_TRUE(want.ok) << want.error;
	EXPECT_TRUE(got.ok) << got.error;
	if (!want.ok || !got.ok)
		return 0;
	EXPECT_EQ(got.cpus, want.cpus);

	// Readers merge CPUs by time: the whole sequence never goes back.
	for (size_t i = 1; i < got.events.size(); i++)
		EXPECT_LE(got.events[i - 1].ts, got.events[i].ts) << "event " << i;

	std::map<int, std::vector<const DatEvent *>> w, g;
	for (const DatEvent &e : want.events)
		w[e.cpu].push_back(&e);
	for (const DatEvent &e : got.events)
		g[e.cpu].push_back(&e);

	// The one event earlytrace adds that its reading cannot predict in
	// full: what the format could not express, just before the end.
	auto &g0 = g[0];
	bool losses = want.graph_parents || want.unmatched || want.unwound;
	if (g0.size() >= 2 && g0[g0.size() - 2]->name == "mark" &&
	    g0[g0.size() - 2]->str.at("text").rfind("trace-dat could not express: ", 0) == 0) {
		const std::string &text = g0[g0.size() - 2]->str.at("text");
		EXPECT_TRUE(losses) << text;
		auto says = [&](uint64_t n, const char *what) {
			return !n || text.find(std::to_string(n) + what) != std::string::npos;
		};
		EXPECT_TRUE(says(want.graph_parents, " parent ips")) << text;
		EXPECT_TRUE(says(want.unmatched, " returns whose call")) << text;
		EXPECT_TRUE(says(want.unwound, " unwound")) << text;
		g0.erase(g0.end() - 2);
	} else {
		EXPECT_FALSE(losses) << "no mark says what could not be expressed";
	}

	size_t compared = 0;
	for (auto &[cpu, list] : w) {
		auto &gl = g[cpu];
		EXPECT_EQ(gl.size(), list.size()) << "events on CPU " << cpu;
		for (size_t i = 0; i < list.size() && i < gl.size(); i++, compared++)
			compare_one(want, *list[i], *gl[i], gl, i);
	}
	for (auto &[cpu, list] : g)
		EXPECT_TRUE(w.count(cpu) || list.empty()) << list.size() << " events on CPU " << cpu;
	return compared;
}

std::string kallsyms_gap_name(const std::string &etr, uint64_t addr)
{
	trace_reader *r = nullptr;
	if (trace_reader_open(&r, etr.c_str()))
		return "";
	std::string name = symbol_name(trace_reader_symtab(r), addr).empty()
				   ? gap_name(trace_reader_symtab(r), addr)
				   : "";
	trace_reader_close(r);
	return name;
}

int convert_to_tracedat(const std::string &etr, const std::string &dat, std::string *err)
{
	VmmResult r = run_vmm({ "report", etr, "--format", "trace-dat", "-o", dat });
	if (err)
		*err = r.err;
	return r.status;
}
