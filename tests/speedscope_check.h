// SPDX-License-Identifier: MIT
// The nesting rules speedscope's Chrome-trace importer applies to B/E
// events, checked on a parsed JSON report (tests/json_parse.h).
#ifndef TESTS_SPEEDSCOPE_CHECK_H
#define TESTS_SPEEDSCOPE_CHECK_H

#include <map>
#include <string>
#include <vector>

#include "tests/json_parse.h"

// What speedscope's Chrome-trace importer requires of B/E events, as it
// reads them: per thread, every E names the innermost open B (else it
// warns "Tried to end X, ending Y instead"), no E without an open B, none
// left open, time never going backwards; frame names are the event's name
// plus its args, so B/E must carry no args (else a function splits by
// caller). "" when all holds, else the first problem.
inline std::string speedscope_problems(const json::Value &doc, size_t *durations)
{
	std::map<double, std::vector<std::string>> open; // tid -> names
	std::map<double, double> last_ts;
	*durations = 0;
	for (const json::Value &e : doc["traceEvents"].arr) {
		const std::string &ph = e["ph"].str;
		if (ph != "B" && ph != "E")
			continue;
		const std::string &name = e["name"].str;
		double tid = e["tid"].num, ts = e["ts"].num;
		if (e.has("args"))
			return ph + " " + name + " has args";
		if (name.find_first_of("{}\"") != std::string::npos)
			return "frame name '" + name + "' is not a plain function name";
		if (last_ts.count(tid) && ts < last_ts[tid])
			return ph + " " + name + " goes back in time";
		last_ts[tid] = ts;
		std::vector<std::string> &stack = open[tid];
		if (ph == "B") {
			stack.push_back(name);
			continue;
		}
		if (stack.empty())
			return "E " + name + " with no open B";
		if (stack.back() != name)
			return "tried to end " + name + ", ending " + stack.back() + " instead";
		stack.pop_back();
		(*durations)++;
	}
	for (const auto &t : open)
		if (!t.second.empty())
			return t.second.back() + " is never ended";
	return "";
}

#endif // TESTS_SPEEDSCOPE_CHECK_H
