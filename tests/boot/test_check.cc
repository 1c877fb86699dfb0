// SPDX-License-Identifier: MIT
// Boot-trace tests as CI runs them: `trace --expect` and `check` on the
// test kernels with the expectation files in tests/expect (KTAP on stdout,
// exit status 0 / 5 / 1, the run's own status first), libvirt domains
// booted through the test driver, domain-xml read back and booted, and the
// Debian kernel's early phase against tests/expect/debian-early.expect.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/ktap_checker.h"

namespace {

std::string expect_file(const char *name)
{
	return std::string(ET_TEST_SRCDIR) + "/expect/" + name + ".expect";
}

std::string node_uri()
{
	char *abs = realpath((std::string(ET_TEST_SRCDIR) + "/libvirt/node.xml").c_str(), nullptr);
	std::string uri = std::string("test://") + (abs ? abs : "/nonexistent");
	free(abs);
	return uri;
}

VmmResult trace_expect(const char *arch, const char *expect, std::vector<std::string> extra = {})
{
	std::vector<std::string> args = { "trace",   "--kernel", image(arch), "--mem", "32M",
					  "--filter", "ct_*",	  "--timeout", "120", "--expect",
					  expect_file(expect) };
	args.insert(args.end(), extra.begin(), extra.end());
	return run_vmm(args);
}

// The KTAP document at the end of stdout, after the guest's console.
KtapDocument ktap_of(const VmmResult &r)
{
	KtapDocument doc = parse_ktap(r.out);
	EXPECT_EQ(doc.error, "") << r.out;
	EXPECT_EQ(doc.totals, ktap_totals(doc));
	return doc;
}

void expect_all_ok(const KtapDocument &doc, size_t planned)
{
	EXPECT_EQ(doc.plan, planned);
	for (const auto &res : doc.results)
		EXPECT_TRUE(res.ok) << res.number << " " << res.description << " # " << res.data;
}

} // namespace

TEST(Check, X86_64ExpectationsPass)
{
	REQUIRE_KVM();
	VmmResult r = trace_expect("x86_64", "x86_64");
	EXPECT_EQ(r.status, 0) << r.err << r.out;
	KtapDocument doc = ktap_of(r);
	expect_all_ok(doc, 12);
	// Without -o the trace is a temporary file, removed after the check:
	// the summary does not name it as if it were kept.
	EXPECT_EQ(r.err.find("/tmp/earlytrace-"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("; not kept (no -o): checked against " + expect_file("x86_64") + " below\n"),
		  std::string::npos)
		<< r.err;
	// After the console, and instead of the printed trace (no -o).
	EXPECT_LT(r.out.find("calltree phase=longmode total=816"), r.out.find("KTAP version 1"));
	EXPECT_EQ(r.out.find("# tracer: function"), std::string::npos);
	EXPECT_NE(r.out.find("# earlytrace check: " + expect_file("x86_64") + " on this run's trace"),
		  std::string::npos)
		<< r.out;
	EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST(Check, I386AndGuestRingExpectationsPass)
{
	REQUIRE_KVM();
	VmmResult r = trace_expect("i386", "i386");
	EXPECT_EQ(r.status, 0) << r.err << r.out;
	expect_all_ok(ktap_of(r), 9);
	r = trace_expect("x86_64", "x86_64-ring", { "--append", "trace=ring exit=0" });
	EXPECT_EQ(r.status, 0) << r.err << r.out;
	KtapDocument doc = ktap_of(r);
	expect_all_ok(doc, 5);
	ASSERT_FALSE(doc.results.empty());
	EXPECT_EQ(doc.results[0].description, "handoff guest-ring");
}

TEST(Check, FailingExpectationsExitWith5)
{
	REQUIRE_KVM();
	VmmResult r = trace_expect("x86_64", "x86_64-failing");
	EXPECT_EQ(r.status, 5) << r.err << r.out;
	KtapDocument doc = ktap_of(r);
	ASSERT_EQ(doc.plan, 10u);
	EXPECT_TRUE(doc.results[0].ok);
	for (size_t i = 1; i < doc.results.size(); i++)
		EXPECT_FALSE(doc.results[i].ok) << doc.results[i].description;
	EXPECT_EQ(doc.results[9].directive, "ERROR");
	EXPECT_EQ(doc.totals, "pass:1 fail:8 xfail:0 xpass:0 skip:0 error:1");
	// Each failure says what was expected and what was found, at file:line.
	std::string f = expect_file("x86_64-failing");
	EXPECT_NE(r.out.find("# " + f + ":10: expected 'ct_leaf' to be called at most 500 times\n# " + f +
			     ":10: it was called 512 times\nnot ok 2 calls ct_leaf <= 500\n"),
		  std::string::npos)
		<< r.out;
	// The unknown function is outside --filter too: said before the boot.
	EXPECT_NE(r.err.find(f + ":18: warning: 'no_such_function' cannot be in this trace: no --filter selects it"),
		  std::string::npos)
		<< r.err;
}

TEST(Check, CheckOnTheSavedTraceAgreesWithTraceExpect)
{
	REQUIRE_KVM();
	std::string out = temp_path("saved.trace"), ktap = temp_path("saved.tap");
	VmmResult r = trace_expect("x86_64", "x86_64-failing", { "--output", out });
	ASSERT_EQ(r.status, 5) << r.err;
	KtapDocument during = ktap_of(r);
	VmmResult c = run_vmm({ "check", out, "--expect", expect_file("x86_64-failing"), "-o", ktap });
	EXPECT_EQ(c.status, 5) << c.err;
	EXPECT_EQ(c.out, "");
	KtapDocument after = parse_ktap(read_file_text(ktap));
	ASSERT_EQ(after.error, "");
	ASSERT_EQ(after.results.size(), during.results.size());
	for (size_t i = 0; i < after.results.size(); i++) {
		EXPECT_EQ(after.results[i].ok, during.results[i].ok);
		EXPECT_EQ(after.results[i].description, during.results[i].description);
	}
	c = run_vmm({ "check", out, "--expect", expect_file("x86_64") });
	EXPECT_EQ(c.status, 0) << c.out << c.err;
	expect_all_ok(ktap_of(c), 12);
	remove(out.c_str());
	remove(ktap.c_str());
}

TEST(Check, ErrorsExitWith1BeforeAnythingRuns)
{
	std::string bad = temp_path("bad.expect");
	FILE *f = fopen(bad.c_str(), "w");
	fputs("# fine\ncalled ct_root\ncalls ct_leaf > 3\n", f);
	fclose(f);
	// The expectations are read before the guest boots: no console output.
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--expect", bad });
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(r.out, "");
	EXPECT_EQ(r.err, "earlytrace: " + bad + ":3: unknown comparison '>' (use ==, >= or <=)\n");
	r = run_vmm({ "check", "/nonexistent.trace", "--expect", expect_file("x86_64") });
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(r.out, "");
	EXPECT_NE(r.err.find("/nonexistent.trace"), std::string::npos) << r.err;
	r = run_vmm({ "check", "/nonexistent.trace", "--expect", bad });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find(":3: unknown comparison"), std::string::npos) << r.err;
	r = run_vmm({ "check", "x.trace" });
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(r.err, "earlytrace: check: --expect FILE is required\n");
	r = run_vmm({ "check", "--help" });
	EXPECT_EQ(r.status, 0);
	EXPECT_NE(r.out.find("Exit status: 0 when every assertion passed; 5"), std::string::npos);
	remove(bad.c_str());
}

TEST(Check, TheRunsOwnStatusComesFirst)
{
	REQUIRE_KVM();
	// The guest exits with 3, every expectation holds: 3, and the report.
	VmmResult r = trace_expect("x86_64", "x86_64", { "--append", "exit=3" });
	EXPECT_EQ(r.status, 3) << r.err;
	expect_all_ok(ktap_of(r), 12);
	// A guest that crashes: 2, and the report of what was traced. (Where
	// the KVM resets the vCPU at a triple fault the run ends as a reset,
	// status 0, and the failed expectations' 5 is the status: fixtures.h.)
	r = trace_expect("x86_64", "x86_64", { "--append", "crash=triple" });
	EXPECT_EQ(r.status, kvm_shutdown_keeps_state() ? 2 : 5) << r.err;
	KtapDocument doc = ktap_of(r);
	EXPECT_EQ(doc.plan, 12u);
}

// ---- libvirt -------------------------------------------------------------

TEST(LibvirtBoot, RunsADomainsDirectKernelBoot)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--connect", node_uri(), "--domain", "et-x86_64", "--timeout", "60" });
	// The domain's command line says exit=7; its initrd is PVH module 0.
	EXPECT_EQ(r.status, 7) << r.err;
	EXPECT_NE(r.out.find("cmdline: exit=7"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("modules: 1"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("first=EARLYTRACE-INITR"), std::string::npos) << r.out;
	EXPECT_EQ(r.err, ""); // nothing ignored, nothing to say
	// The i686 domain boots the i386 kernel.
	r = run_vmm({ "run", "--connect", node_uri(), "--domain", "et-i386", "--timeout", "60" });
	EXPECT_EQ(r.status, 5) << r.err;
}

TEST(LibvirtBoot, ExplicitOptionsOverrideTheDomain)
{
	REQUIRE_KVM();
	for (const auto &args : std::vector<std::vector<std::string>>{
		     { "run", "--append", "exit=9", "--connect", node_uri(), "--domain", "et-x86_64" },
		     { "run", "--connect", node_uri(), "--domain", "et-x86_64", "--append", "exit=9" },
	     }) {
		std::vector<std::string> a = args;
		a.insert(a.end(), { "--timeout", "60" });
		VmmResult r = run_vmm(a);
		EXPECT_EQ(r.status, 9) << r.err;
		EXPECT_NE(r.out.find("cmdline: exit=9"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("modules: 1"), std::string::npos) << r.out; // still the domain's initrd
	}
}

TEST(LibvirtBoot, RefusedAndNotedDomains)
{
	VmmResult r = run_vmm({ "run", "--connect", node_uri(), "--domain", "et-many-vcpus" });
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(r.err, "earlytrace: domain 'et-many-vcpus': <vcpu> 255: earlytrace runs at most 254 vCPUs\n");
	r = run_vmm({ "run", "--connect", node_uri(), "--domain", "et-no-kernel" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("domain 'et-no-kernel': no <kernel> in <os>"), std::string::npos) << r.err;
	r = run_vmm({ "trace", "--connect", "test:///nonexistent.xml", "--domain", "x" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--connect test:///nonexistent.xml: cannot connect: "), std::string::npos) << r.err;
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	REQUIRE_KVM();
	// Devices earlytrace does not have: it runs, and says what it left out.
	r = run_vmm({ "run", "--connect", node_uri(), "--domain", "et-devices", "--timeout", "60" });
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.err.find("earlytrace: domain 'et-devices': <disk> x2 (vda, sda): ignored, earlytrace has no storage devices\n"),
		  std::string::npos)
		<< r.err;
}

// libvirt lives in a plugin the VMM loads only for --domain and domain-xml
// (vmm/libvirt/plugin.h): the VMM itself does not link it, a run without
// --domain works without the plugin, and a missing plugin is one line.
TEST(LibvirtBoot, ThePluginIsLoadedOnlyWhenNeeded)
{
	VmmRun ldd;
	ldd.args = { "--version" };
	ldd.env = { "LD_TRACE_LOADED_OBJECTS=1" }; // ld.so lists what it would load, as ldd does
	VmmResult r = run_vmm(ldd);
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("libc.so"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("libvirt"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("libxml2"), std::string::npos) << r.out;

	VmmRun missing;
	missing.env = { "EARLYTRACE_LIBVIRT_PLUGIN=/nonexistent/earlytrace-libvirt.so" };
	missing.args = { "domain-xml", "--kernel", image("x86_64") };
	r = run_vmm(missing);
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(r.err, "earlytrace: libvirt support (--domain, domain-xml): cannot load its plugin: "
			 "/nonexistent/earlytrace-libvirt.so: cannot open shared object file: No such file or directory\n");
	missing.args = { "run", "--connect", node_uri(), "--domain", "et-x86_64" };
	r = run_vmm(missing);
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("cannot load its plugin"), std::string::npos) << r.err;
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	// A file that is not the plugin of this build is refused by name: the
	// C library, found where this process loaded it from.
	Dl_info libc{};
	ASSERT_NE(dladdr((void *)&fputs, &libc), 0);
	const std::string libc_so = libc.dli_fname;
	missing.env = { "EARLYTRACE_LIBVIRT_PLUGIN=" + libc_so };
	missing.args = { "domain-xml", "--kernel", image("x86_64") };
	r = run_vmm(missing);
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(r.err, "earlytrace: " + libc_so +
				 ": not the libvirt plugin of this earlytrace build (rebuild both)\n");
	REQUIRE_KVM();
	missing.args = { "run", "--kernel", image("x86_64"), "--append", "exit=3", "--timeout", "60" };
	r = run_vmm(missing);
	EXPECT_EQ(r.status, 3) << r.err;
}

TEST(LibvirtBoot, TraceADomainWithExpectations)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "trace", "--connect", node_uri(), "--domain", "et-x86_64", "--append",
				"exit=0", "--filter", "ct_*", "--expect", expect_file("x86_64"), "--timeout", "60" });
	EXPECT_EQ(r.status, 0) << r.err;
	expect_all_ok(ktap_of(r), 12);
}

TEST(LibvirtBoot, DomainXmlReadsBackAndBoots)
{
	REQUIRE_KVM();
	TempDir dir;
	std::string xml = dir.file("dom.xml");
	VmmResult r = run_vmm({ "domain-xml", "--kernel", image("x86_64"), "--append", "exit=6 <&>",
				"--mem", "24M", "--name", "et-roundtrip", "-o", xml });
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.err, "");
	std::string node = dir.file("node.xml");
	FILE *f = fopen(node.c_str(), "w");
	fprintf(f, "<node>\n%s</node>\n", read_file_text(xml).c_str());
	fclose(f);
	r = run_vmm({ "run", "--connect", "test://" + node, "--domain", "et-roundtrip", "--timeout", "60" });
	EXPECT_EQ(r.status, 6) << r.err;
	EXPECT_NE(r.out.find("cmdline: exit=6 <&>"), std::string::npos) << r.out;
	EXPECT_EQ(r.err, ""); // earlytrace's own definition has nothing it would ignore

	// From a domain, with an option over it: the result is the merge.
	r = run_vmm({ "domain-xml", "--connect", node_uri(), "--domain", "et-x86_64", "--append", "exit=1" });
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("<name>et-x86_64</name>"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("<cmdline>exit=1</cmdline>"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("/tests/libvirt/initrd.txt</initrd>"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("<memory unit=\"KiB\">32768</memory>"), std::string::npos) << r.out;

	r = run_vmm({ "domain-xml", "--kernel", "README.md" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("not an ELF file or a bzImage"), std::string::npos) << r.err;
}

// ---- the Debian kernel -------------------------------------------------------

// Named LinuxBoot so the sanitizer pass skips it like the other stock-kernel
// boots (scripts/test.sh): a minute or two on an emulating nested KVM.
TEST(LinuxBoot, DebianEarlyPhaseMeetsItsExpectations)
{
	std::string vmlinuz = debian_kernel_dir() + "/vmlinuz";
	REQUIRE_KVM();
	if (!file_exists(vmlinuz))
		GTEST_SKIP() << vmlinuz << " is missing: run images/fetch-debian-kernel.sh";
	VmmRun run;
	run.args = { "trace",	"--kernel", vmlinuz,	  "--mem",    "256M",
		     "--append", "console=ttyS0", "--until", "sched_init", "--expect",
		     expect_file("debian-early"), "--timeout", "1200" };
	run.harness_timeout_s = 1260;
	VmmResult r = run_vmm(run);
	EXPECT_EQ(r.status, 0) << r.err << r.out.substr(r.out.size() > 4000 ? r.out.size() - 4000 : 0);
	KtapDocument doc = ktap_of(r);
	expect_all_ok(doc, 14);
}
