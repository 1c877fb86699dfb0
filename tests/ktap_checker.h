// SPDX-License-Identifier: MIT
// A strict checker for KTAP version 1 documents, as
// Documentation/dev-tools/ktap.rst specifies them, for the tests of
// earlytrace's KTAP reports: a version line, a plan "1..N", N result lines
// "ok|not ok <n> [description][ # [directive] [diagnostic]]" numbered 1..N
// with no '#' in a description, and diagnostic lines "# ..." anywhere after
// the version line. Lines before the version line (a guest's console) are
// skipped, as KTAP's "unknown lines" are; after it, nothing else may appear.
#ifndef TESTS_KTAP_CHECKER_H
#define TESTS_KTAP_CHECKER_H

#include <regex>
#include <sstream>
#include <string>
#include <vector>

struct KtapResult {
	bool ok;
	unsigned number;
	std::string description, directive, data;
};

struct KtapDocument {
	std::string error; // empty when the document is valid
	unsigned plan = 0;
	std::vector<KtapResult> results;
	std::vector<std::string> diagnostics;
	std::string totals; // the kselftest "# Totals: ..." line, if any
};

inline KtapDocument parse_ktap(const std::string &text)
{
	static const std::regex plan_re("^1\\.\\.([0-9]+)$");
	static const std::regex result_re("^(ok|not ok) ([0-9]+)(?: ([^#]*[^# ]))?(?: #(?: (SKIP|TODO|XFAIL|TIMEOUT|ERROR)\\b)? ?(.*))?$");
	KtapDocument doc;
	std::istringstream in(text);
	std::string line;
	bool started = false, planned = false;
	unsigned line_no = 0;

	while (std::getline(in, line)) {
		std::smatch m;
		line_no++;
		if (!started) {
			started = line == "KTAP version 1";
			continue;
		}
		auto fail = [&](const std::string &why) {
			if (doc.error.empty())
				doc.error = "line " + std::to_string(line_no) + ": " + why + ": '" + line + "'";
		};
		if (line == "#" || line.rfind("# ", 0) == 0) {
			doc.diagnostics.push_back(line.size() > 2 ? line.substr(2) : "");
			if (line.rfind("# Totals: ", 0) == 0)
				doc.totals = line.substr(10);
		} else if (std::regex_match(line, m, plan_re)) {
			if (planned || !doc.results.empty())
				fail("a second plan, or a plan after results");
			planned = true;
			doc.plan = (unsigned)std::stoul(m[1]);
		} else if (std::regex_match(line, m, result_re)) {
			KtapResult r{ m[1] == "ok", (unsigned)std::stoul(m[2]), m[3], m[4], m[5] };
			if (!planned)
				fail("a result before the plan");
			if (r.number != doc.results.size() + 1)
				fail("results must be numbered 1, 2, ...");
			if (r.directive == "ERROR" && r.ok)
				fail("ERROR goes with 'not ok'");
			doc.results.push_back(r);
		} else {
			fail("not a KTAP line");
		}
	}
	if (!started)
		doc.error = "no 'KTAP version 1' line";
	else if (!planned && doc.error.empty())
		doc.error = "no plan";
	else if (doc.results.size() != doc.plan && doc.error.empty())
		doc.error = "plan says " + std::to_string(doc.plan) + ", found " +
			    std::to_string(doc.results.size()) + " results";
	return doc;
}

// "pass:3 fail:1 ..." from the results, to compare with the totals line.
inline std::string ktap_totals(const KtapDocument &doc)
{
	unsigned pass = 0, fail = 0, error = 0, skip = 0;
	for (const auto &r : doc.results) {
		if (r.directive == "SKIP")
			skip++;
		else if (r.directive == "ERROR")
			error++;
		else if (r.ok)
			pass++;
		else
			fail++;
	}
	return "pass:" + std::to_string(pass) + " fail:" + std::to_string(fail) +
	       " xfail:0 xpass:0 skip:" + std::to_string(skip) + " error:" + std::to_string(error);
}

#endif // TESTS_KTAP_CHECKER_H
