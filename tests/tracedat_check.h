// SPDX-License-Identifier: MIT
// Judging a trace.dat by a real reader: libtracecmd opens it and
// libtraceevent decodes every event by the file's own format texts; the
// result is compared, event by event, with what earlytrace's own reading
// of the trace file (trace_merge, the reader's notes and symbols) says the
// file must hold.
#ifndef TESTS_TRACEDAT_CHECK_H
#define TESTS_TRACEDAT_CHECK_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

struct DatEvent {
	int cpu = 0;
	uint64_t ts = 0;  // read: as libtracecmd reports it (ns with a TSC frequency)
	uint64_t tsc = 0; // expected: the raw guest TSC it must come from
	std::string system, name;
	uint64_t flags = 0; // common_flags
	std::map<std::string, uint64_t> num;	 // numeric fields
	std::map<std::string, std::string> str;	 // string fields
	// Functions at the address fields (ip, parent_ip, func, rip): the
	// reader's name for it ("" for none); expected: earlytrace's name, and
	// in gap[] the name kallsyms semantics may give instead where
	// earlytrace has none (the symbol below, whose size ended before it).
	std::map<std::string, std::string> sym, gap;
	int entry = -1; // expected funcgraph_exit: its entry's index on the CPU
};

struct DatFile {
	bool ok = false;
	std::string error;
	int cpus = 0;
	std::vector<DatEvent> events; // in the order libtracecmd iterates them
};

// Opens path with tracecmd_open() and reads every event with
// tracecmd_iterate_events().
DatFile read_tracedat(const std::string &path);

struct DatExpect {
	bool ok = false;
	std::string error;
	uint64_t tsc_khz = 0;
	int cpus = 0;
	std::vector<DatEvent> events; // earlytrace's order (TSC order)
	// What trace.dat cannot hold, as the writer must count it.
	uint64_t graph_parents = 0, unmatched = 0, unwound = 0;
};

// What trace.dat written from the earlytrace trace file etr must hold.
DatExpect expect_tracedat(const std::string &etr);

// Adds a gtest failure for every difference (per CPU, in order; times
// within the conversion's precision; names; fields). Returns the number
// of events compared.
size_t compare_tracedat(const DatExpect &want, const DatFile &got);

// The name a kallsyms reader gives addr where earlytrace names none: the
// symbol below it, when a known size ended before addr ("" otherwise).
std::string kallsyms_gap_name(const std::string &etr, uint64_t addr);

// `earlytrace report ETR --format trace-dat -o DAT` through the binary;
// its exit status, stderr in *err.
int convert_to_tracedat(const std::string &etr, const std::string &dat, std::string *err);

#endif // TESTS_TRACEDAT_CHECK_H
