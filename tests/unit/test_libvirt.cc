// SPDX-License-Identifier: MIT
// libvirt domains: parsing a definition (what is taken, refused with the
// element named, noted as ignored), reading domains through libvirt's
// built-in test driver (tests/libvirt/node.xml, no daemon), the precedence
// of explicit options over the domain's, and domain-xml's output read back.
#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <list>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/cmd/domain_xml.h"
#include "vmm/libvirt/domain.h"
#include "vmm/libvirt/domain_name.h"
#include "vmm/libvirt/domain_xml.h"

namespace {

std::string node_uri()
{
	char *abs = realpath((std::string(ET_TEST_SRCDIR) + "/libvirt/node.xml").c_str(), nullptr);
	std::string uri = std::string("test://") + (abs ? abs : "/nonexistent/node.xml");
	free(abs);
	return uri;
}

// A domain definition around the given <os> content and extra elements.
std::string domain_xml(const std::string &extra,
		       const std::string &os = "<type arch='x86_64'>hvm</type><kernel>/k</kernel>",
		       const std::string &type = "kvm")
{
	return "<domain type='" + type + "'><name>dom</name><memory unit='MiB'>64</memory>" +
	       "<os>" + os + "</os>" + extra + "</domain>";
}

struct Parsed {
	int ret;
	std::string error;
	libvirt_domain d{};
	std::vector<std::string> notes;
	~Parsed() { libvirt_domain_free(&d); }
};

void parse_into(Parsed &p, const std::string &xml)
{
	et_clear_error();
	p.ret = libvirt_domain_parse(&p.d, xml.data(), xml.size());
	p.error = p.ret ? et_last_error() : "";
	for (size_t i = 0; i < p.d.notes.nr; i++)
		p.notes.push_back(p.d.notes.lines[i]);
}

std::string parse_error(const std::string &xml)
{
	Parsed p;
	parse_into(p, xml);
	EXPECT_EQ(p.ret, -1) << xml;
	return p.error;
}

std::string all_notes(const Parsed &p)
{
	std::string s;
	for (const auto &n : p.notes)
		s += n + "\n";
	return s;
}

// Parses `run` options; the strings must outlive the options.
int parse_run(std::vector<std::string> args, struct run_options *o)
{
	static std::list<std::vector<std::string>> keep;
	keep.push_back(std::move(args));
	std::vector<std::string> &a = keep.back();
	a.insert(a.begin(), "run");
	std::vector<char *> argv;
	for (auto &s : a)
		argv.push_back(&s[0]);
	argv.push_back(nullptr);
	return cli_parse_run((int)a.size(), argv.data(), o);
}

} // namespace

TEST(LibvirtParse, DirectKernelBoot)
{
	Parsed p;
	parse_into(p, "<domain type='kvm'>\n"
		      "  <name>  web1 </name>\n"
		      "  <memory unit='KiB'>524288</memory>\n"
		      "  <vcpu placement='static'>1</vcpu>\n"
		      "  <os>\n"
		      "    <type arch='x86_64' machine='pc-q35-7.2'>hvm</type>\n"
		      "    <kernel>/boot/vmlinuz</kernel>\n"
		      "    <initrd>/boot/initrd.img</initrd>\n"
		      "    <cmdline>console=ttyS0 root=/dev/vda1 quiet</cmdline>\n"
		      "    <boot dev='hd'/>\n"
		      "  </os>\n"
		      "</domain>\n");
	ASSERT_EQ(p.ret, 0) << p.error;
	EXPECT_STREQ(p.d.name, "web1");
	EXPECT_STREQ(p.d.kernel, "/boot/vmlinuz");
	EXPECT_STREQ(p.d.initrd, "/boot/initrd.img");
	EXPECT_STREQ(p.d.cmdline, "console=ttyS0 root=/dev/vda1 quiet");
	EXPECT_EQ(p.d.mem_size, 512ull << 20);
	EXPECT_EQ(p.d.vcpus, 1u);
	EXPECT_TRUE(p.notes.empty()) << all_notes(p);
}

TEST(LibvirtParse, MemoryUnits)
{
	struct {
		const char *memory;
		uint64_t bytes;
	} cases[] = {
		{ "<memory>65536</memory>", 64ull << 20 }, // KiB by default
		{ "<memory unit='KiB'>65536</memory>", 64ull << 20 },
		{ "<memory unit='k'>65536</memory>", 64ull << 20 },
		{ "<memory unit='M'>64</memory>", 64ull << 20 },
		{ "<memory unit='mib'>64</memory>", 64ull << 20 },
		{ "<memory unit='G'>2</memory>", 2ull << 30 },
		{ "<memory unit='GiB'>2</memory>", 2ull << 30 },
		{ "<memory unit='MB'>4096</memory>", 4096000000ull },
		{ "<memory unit='GB'>8</memory>", 8000000000ull },
		{ "<memory unit='bytes'>67108864</memory>", 64ull << 20 },
		{ "<memory unit='b'>67108864</memory>", 64ull << 20 },
		{ "<memory unit='T'>1</memory>", 1ull << 40 },
		{ "<memory> 65536 </memory>", 64ull << 20 },
	};
	for (const auto &c : cases) {
		Parsed p;
		parse_into(p, "<domain type='kvm'><name>m</name>" + std::string(c.memory) +
				      "<os><type>hvm</type><kernel>/k</kernel></os></domain>");
		ASSERT_EQ(p.ret, 0) << c.memory << ": " << p.error;
		EXPECT_EQ(p.d.mem_size, c.bytes) << c.memory;
	}
	// Not a whole number of pages: rounded up, and said.
	Parsed p;
	parse_into(p, "<domain type='kvm'><name>m</name><memory unit='b'>4194305</memory>"
		      "<os><type>hvm</type><kernel>/k</kernel></os></domain>");
	ASSERT_EQ(p.ret, 0) << p.error;
	EXPECT_EQ(p.d.mem_size, 4194304u + 4096);
	EXPECT_NE(all_notes(p).find("<memory> 4194305 b: rounded up to 4100 KiB"), std::string::npos)
		<< all_notes(p);
	// No <memory>: earlytrace's default stays.
	Parsed q;
	parse_into(q, "<domain type='kvm'><name>m</name><os><type>hvm</type><kernel>/k</kernel></os></domain>");
	ASSERT_EQ(q.ret, 0) << q.error;
	EXPECT_EQ(q.d.mem_size, 0u);
}

TEST(LibvirtParse, RefusalsNameTheElement)
{
	struct {
		std::string xml, error;
	} cases[] = {
		{ domain_xml("<vcpu>255</vcpu>"), "domain 'dom': <vcpu> 255: earlytrace runs at most 254 vCPUs" },
		{ domain_xml("<vcpu>none</vcpu>"), "<vcpu> 'none': not a number of vCPUs" },
		{ domain_xml("<vcpu>0</vcpu>"), "<vcpu> '0': not a number of vCPUs" },
		{ domain_xml("<vcpu current='5'>4</vcpu>"), "<vcpu current='5'>: not a number of vCPUs from 1 to 4" },
		{ domain_xml("", "<type arch='aarch64' machine='virt'>hvm</type><kernel>/k</kernel>"),
		  "domain 'dom': <os><type arch='aarch64'>: earlytrace runs x86 guests (x86_64 or i686)" },
		{ domain_xml("", "<type arch='x86_64'>xen</type><kernel>/k</kernel>"),
		  "domain 'dom': <os><type> xen: earlytrace runs hvm guests" },
		{ domain_xml("", "<kernel>/k</kernel>"), "domain 'dom': no <os><type>" },
		{ domain_xml("", "<type>hvm</type>", "xen"),
		  "domain 'dom': <domain type='xen'>: earlytrace runs KVM guests (type 'kvm' or 'qemu')" },
		{ domain_xml("", "<type>hvm</type>", "lxc"), "<domain type='lxc'>" },
		{ "<domain><name>dom</name><os><type>hvm</type></os></domain>", "domain 'dom': <domain> has no type" },
		{ "<domain type='kvm'><name>dom</name><memory>1024</memory><os><type>hvm</type></os></domain>",
		  "domain 'dom': <memory> 1024 KiB: earlytrace needs at least 2 MiB" },
		{ "<domain type='kvm'><name>dom</name><memory unit='XB'>1</memory><os><type>hvm</type></os></domain>",
		  "domain 'dom': <memory unit='XB'>: unknown unit" },
		{ "<domain type='kvm'><name>dom</name><memory>lots</memory><os><type>hvm</type></os></domain>",
		  "domain 'dom': <memory> 'lots'" },
		{ "<domain type='kvm'><name>dom</name><memory unit='E'>99999</memory><os><type>hvm</type></os></domain>",
		  "domain 'dom': <memory> '99999'" },
		{ "<domain type='kvm'><name>dom</name></domain>", "domain 'dom': no <os>" },
		{ "<domain type='kvm'><os/></domain>", "without a <name>" },
		{ "<network><name>n</name></network>", "not a libvirt domain definition: the root element is <network>" },
		{ "<domain type='kvm'><name>x</name>", "not well-formed XML: line 1" },
		{ "", "not well-formed XML" },
	};
	for (const auto &c : cases) {
		std::string e = parse_error(c.xml);
		EXPECT_NE(e.find(c.error), std::string::npos) << c.xml << "\ngave: " << e;
		EXPECT_EQ(e.find('\n'), std::string::npos) << e; // one line
	}
}

TEST(LibvirtParse, VcpusBecomeTheMachinesCpusUnlessCpusIsGiven)
{
	Parsed p;
	parse_into(p, domain_xml("<vcpu current='2'>4</vcpu>"));
	ASSERT_EQ(p.ret, 0) << p.error;
	EXPECT_EQ(p.d.vcpus, 2u);
	struct run_options o;
	ASSERT_EQ(parse_run({ "--domain", "dom" }, &o), 0) << et_last_error();
	ASSERT_EQ(libvirt_domain_apply(&p.d, &o), 0) << et_last_error();
	EXPECT_EQ(o.nr_cpus, 2u);
	ASSERT_EQ(parse_run({ "--domain", "dom", "--cpus", "1" }, &o), 0) << et_last_error();
	ASSERT_EQ(libvirt_domain_apply(&p.d, &o), 0) << et_last_error();
	EXPECT_EQ(o.nr_cpus, 1u);
}

TEST(LibvirtParse, NoKernelIsRefusedUnlessKernelIsGiven)
{
	Parsed p;
	parse_into(p, domain_xml("", "<type arch='x86_64'>hvm</type><boot dev='hd'/>"));
	ASSERT_EQ(p.ret, 0) << p.error;
	EXPECT_EQ(p.d.kernel, nullptr);
	struct run_options o;
	ASSERT_EQ(parse_run({ "--domain", "dom" }, &o), 0) << et_last_error();
	EXPECT_EQ(libvirt_domain_apply(&p.d, &o), -1);
	EXPECT_NE(std::string(et_last_error()).find("domain 'dom': no <kernel> in <os>: earlytrace boots a kernel directly"),
		  std::string::npos)
		<< et_last_error();
	// An explicit --kernel stands in for the missing element.
	ASSERT_EQ(parse_run({ "--domain", "dom", "--kernel", "k.elf" }, &o), 0);
	EXPECT_EQ(libvirt_domain_apply(&p.d, &o), 0);
	EXPECT_STREQ(o.kernel, "k.elf");
	EXPECT_EQ(o.mem_size, 64ull << 20);
}

TEST(LibvirtParse, IgnoredPartsEachGetANote)
{
	Parsed p;
	parse_into(p, "<domain type='qemu'><name>desk</name><memory unit='GiB'>1</memory>"
		      "<maxMemory slots='16' unit='GiB'>4</maxMemory>"
		      "<vcpu current='1'>4</vcpu>"
		      "<os><type arch='x86_64' machine='q35'>hvm</type>"
		      "<loader readonly='yes' type='pflash'>/OVMF_CODE.fd</loader><nvram>/v.fd</nvram>"
		      "<kernel>/k</kernel><smbios mode='sysinfo'/><bogus/></os>"
		      "<features><acpi/><apic/><pae/><hyperv/></features>"
		      "<cpu mode='custom'><model>Skylake-Client</model><feature policy='require' name='vmx'/><feature policy='disable' name='arch-capabilities'/>"
		      "<numa><cell id='0' cpus='0' memory='1'/><cell id='1' cpus='1' memory='1'/></numa></cpu>"
		      "<sysinfo type='smbios'/>"
		      "<devices>"
		      "<disk type='file' device='disk'><target dev='vda'/></disk>"
		      "<disk type='file' device='disk'><target dev='vdb'/></disk>"
		      "<filesystem type='mount'><target dir='share'/></filesystem>"
		      "<interface type='bridge'/>"
		      "<hostdev mode='subsystem' type='pci'/>"
		      "<graphics type='spice'/><video><model type='qxl'/></video>"
		      "<sound model='ich9'/><rng model='virtio'/>"
		      "<input type='tablet' bus='usb'/>"
		      "<serial type='file'><target port='0'/></serial><serial type='pty'/>"
		      "<console type='pty'><target type='virtio'/></console>"
		      "<channel type='unix'/>"
		      "</devices>"
		      "<qemu:commandline xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'/>"
		      "</domain>");
	ASSERT_EQ(p.ret, 0) << p.error;
	std::string n = all_notes(p);
	for (const char *want : {
		     "domain 'desk': <domain type='qemu'> asks for emulation: earlytrace always runs the guest with KVM",
		     "domain 'desk': <vcpu current='1'> 4: earlytrace starts 1 of them and none can be plugged in later",
		     "domain 'desk': <os><loader>: ignored, earlytrace runs no firmware",
		     "domain 'desk': <os><nvram>: ignored",
		     "domain 'desk': <os><smbios>: ignored, earlytrace provides no SMBIOS tables",
		     "domain 'desk': <os><bogus>: not understood by earlytrace, ignored",
		     "domain 'desk': <features> hyperv: ignored, earlytrace's machine does not provide them",
		     "domain 'desk': <cpu mode='custom'> Skylake-Client: ignored",
		     "domain 'desk': <cpu><feature> (1): ignored",
		     "domain 'desk': <cpu><numa> 2 cells: ignored",
		     "domain 'desk': <disk> x2 (vda, vdb): ignored, earlytrace has no storage devices",
		     "domain 'desk': <filesystem> (share): ignored, earlytrace has no storage devices",
		     "domain 'desk': <interface> (bridge): ignored, earlytrace has no network devices",
		     "domain 'desk': <hostdev> (pci): ignored, earlytrace passes no host devices through",
		     "domain 'desk': <graphics> (spice): ignored, earlytrace has no display",
		     "domain 'desk': <video> (qxl): ignored",
		     "domain 'desk': <sound> (ich9): ignored",
		     "domain 'desk': <rng> (virtio): ignored, earlytrace has no such device",
		     "domain 'desk': <input> (tablet): ignored",
		     "domain 'desk': <serial type='file'>: COM1 goes to earlytrace's standard output instead",
		     "domain 'desk': <serial> (pty): ignored, earlytrace has one serial port, COM1",
		     "domain 'desk': <console> (pty): ignored, earlytrace's console is COM1",
		     "domain 'desk': <channel> (unix): ignored",
		     "domain 'desk': <maxMemory>: ignored, earlytrace has no memory hotplug",
		     "domain 'desk': <sysinfo>: ignored, earlytrace provides no SMBIOS tables",
		     "domain 'desk': <qemu:commandline>: not understood by earlytrace, ignored",
	     })
		EXPECT_NE(n.find(want), std::string::npos) << "missing: " << want << "\nnotes:\n" << n;
	for (const auto &line : p.notes)
		EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(LibvirtParse, WhatEveryLibvirtDomainHasIsNotNoise)
{
	// virsh dumpxml of a plain QEMU/KVM direct-boot domain: the implicit
	// controllers, PS/2 input, balloon, serial console, tuning and policy
	// elements change nothing for earlytrace, so no notes.
	Parsed p;
	parse_into(p, "<domain type='kvm' id='3'>"
		      "<name>plain</name><uuid>c7a5fdbd-cdaf-9455-926a-d65c16db1809</uuid>"
		      "<title>t</title><description>d</description><metadata><x:y xmlns:x='urn:x'/></metadata>"
		      "<memory unit='KiB'>1048576</memory><currentMemory unit='KiB'>524288</currentMemory>"
		      "<memoryBacking><hugepages/></memoryBacking>"
		      "<vcpu placement='static'>1</vcpu><cputune><shares>1024</shares></cputune>"
		      "<resource><partition>/machine</partition></resource>"
		      "<os><type arch='x86_64' machine='pc-i440fx-7.2'>hvm</type><kernel>/k</kernel>"
		      "<cmdline>console=ttyS0</cmdline><boot dev='hd'/><bootmenu enable='no'/></os>"
		      "<features><acpi/><apic/><pae/></features>"
		      "<cpu mode='host-passthrough' check='none' migratable='on'><topology sockets='1' dies='1' cores='1' threads='1'/></cpu>"
		      "<clock offset='utc'><timer name='rtc' tickpolicy='catchup'/></clock>"
		      "<on_poweroff>destroy</on_poweroff><on_reboot>restart</on_reboot><on_crash>destroy</on_crash>"
		      "<pm><suspend-to-mem enabled='no'/></pm>"
		      "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator>"
		      "<controller type='usb' index='0' model='piix3-uhci'/><controller type='pci' index='0' model='pci-root'/>"
		      "<serial type='pty'><target type='isa-serial' port='0'/></serial>"
		      "<console type='pty'><target type='serial' port='0'/></console>"
		      "<input type='mouse' bus='ps2'/><input type='keyboard' bus='ps2'/>"
		      "<audio id='1' type='none'/><memballoon model='virtio'/><panic model='isa'/>"
		      "</devices><seclabel type='dynamic' model='apparmor'/></domain>");
	ASSERT_EQ(p.ret, 0) << p.error;
	EXPECT_TRUE(p.notes.empty()) << all_notes(p);
	EXPECT_STREQ(p.d.cmdline, "console=ttyS0");
}

TEST(LibvirtParse, I686IsX86)
{
	Parsed p;
	parse_into(p, domain_xml("", "<type arch='i686'>hvm</type><kernel>/k32</kernel>"));
	ASSERT_EQ(p.ret, 0) << p.error;
	EXPECT_STREQ(p.d.kernel, "/k32");
}

// ---- the test driver ---------------------------------------------------

TEST(LibvirtTestDriver, ReadsADomain)
{
	libvirt_domain d;
	ASSERT_EQ(libvirt_domain_read(&d, node_uri().c_str(), "et-x86_64"), 0) << et_last_error();
	EXPECT_STREQ(d.name, "et-x86_64");
	EXPECT_EQ(std::string(d.uri), node_uri());
	EXPECT_STREQ(d.kernel, "build/images/x86_64.elf");
	EXPECT_STREQ(d.initrd, "tests/libvirt/initrd.txt");
	EXPECT_STREQ(d.cmdline, "exit=7");
	EXPECT_EQ(d.mem_size, 32ull << 20);
	EXPECT_EQ(d.notes.nr, 0u) << (d.notes.nr ? d.notes.lines[0] : "");
	libvirt_domain_free(&d);

	// By ID, as virsh looks domains up (the test driver runs them all).
	ASSERT_EQ(libvirt_domain_read(&d, node_uri().c_str(), "2"), 0) << et_last_error();
	EXPECT_STREQ(d.name, "et-i386");
	libvirt_domain_free(&d);
}

TEST(LibvirtTestDriver, DomainsEarlytraceRefuses)
{
	struct {
		const char *domain, *error;
	} cases[] = {
		{ "et-many-vcpus", "domain 'et-many-vcpus': <vcpu> 255: earlytrace runs at most 254 vCPUs" },
		{ "et-aarch64", "domain 'et-aarch64': <os><type arch='aarch64'>: earlytrace runs x86 guests" },
		{ "et-xen", "domain 'et-xen': <domain type='xen'>: earlytrace runs KVM guests" },
		{ "et-tiny", "domain 'et-tiny': <memory> 1024 KiB: earlytrace needs at least 2 MiB" },
		{ "et-nonesuch", "--domain et-nonesuch: not found on test:///" },
	};
	for (const auto &c : cases) {
		libvirt_domain d;
		EXPECT_EQ(libvirt_domain_read(&d, node_uri().c_str(), c.domain), -1) << c.domain;
		std::string e = et_last_error();
		EXPECT_NE(e.find(c.error), std::string::npos) << e;
		EXPECT_EQ(e.find('\n'), std::string::npos) << e;
		libvirt_domain_free(&d);
	}
	// The domain without <kernel> is read; applying it is what fails.
	libvirt_domain d;
	ASSERT_EQ(libvirt_domain_read(&d, node_uri().c_str(), "et-no-kernel"), 0) << et_last_error();
	struct run_options o;
	ASSERT_EQ(parse_run({ "--domain", "et-no-kernel" }, &o), 0);
	EXPECT_EQ(libvirt_domain_apply(&d, &o), -1);
	EXPECT_NE(std::string(et_last_error()).find("domain 'et-no-kernel': no <kernel> in <os>"), std::string::npos);
	libvirt_domain_free(&d);
}

TEST(LibvirtTestDriver, ConnectionErrorsAreOneLine)
{
	libvirt_domain d;
	EXPECT_EQ(libvirt_domain_read(&d, "test:///nonexistent/node.xml", "x"), -1);
	std::string e = et_last_error();
	EXPECT_NE(e.find("--connect test:///nonexistent/node.xml: cannot connect: "), std::string::npos) << e;
	EXPECT_EQ(e.find('\n'), std::string::npos) << e;
	EXPECT_EQ(libvirt_domain_read(&d, "bogus+scheme:///x", "x"), -1);
	EXPECT_NE(std::string(et_last_error()).find("--connect bogus+scheme:///x: cannot connect"), std::string::npos);
}

TEST(LibvirtTestDriver, NotesForWhatIsLeftOut)
{
	libvirt_domain d;
	ASSERT_EQ(libvirt_domain_read(&d, node_uri().c_str(), "et-devices"), 0) << et_last_error();
	std::string n;
	for (size_t i = 0; i < d.notes.nr; i++)
		n += std::string(d.notes.lines[i]) + "\n";
	EXPECT_NE(n.find("<disk> x2 (vda, sda): ignored, earlytrace has no storage devices"), std::string::npos) << n;
	EXPECT_NE(n.find("<interface> (network): ignored"), std::string::npos) << n;
	EXPECT_NE(n.find("<os><loader>: ignored"), std::string::npos) << n;
	EXPECT_NE(n.find("<vcpu current='1'> 4"), std::string::npos) << n;
	EXPECT_EQ(d.mem_size, 1ull << 30);
	libvirt_domain_free(&d);
}

// ---- options ------------------------------------------------------------

TEST(LibvirtOptions, ParsingAndChecks)
{
	struct run_options o;
	ASSERT_EQ(parse_run({ "--connect", "test:///default", "--domain", "d" }, &o), 0) << et_last_error();
	EXPECT_STREQ(o.connect, "test:///default");
	EXPECT_STREQ(o.domain, "d");
	EXPECT_EQ(o.kernel, nullptr); // the domain names it
	EXPECT_EQ(o.given, 0u);
	ASSERT_EQ(parse_run({ "--domain=d" }, &o), 0) << et_last_error(); // libvirt's default URI
	EXPECT_EQ(o.connect, nullptr);
	EXPECT_EQ(parse_run({ "--connect", "test:///default", "-k", "k" }, &o), -1);
	EXPECT_NE(std::string(et_last_error()).find("run: --connect URI goes with --domain NAME"), std::string::npos);
	EXPECT_EQ(parse_run({ "--domain", "" }, &o), -1);
	EXPECT_EQ(parse_run({}, &o), -1);
	EXPECT_NE(std::string(et_last_error()).find("--kernel FILE is required (or --domain NAME)"), std::string::npos);
	ASSERT_EQ(parse_run({ "-k", "k", "-i", "i", "-p", "", "-m", "64M" }, &o), 0);
	EXPECT_EQ(o.given, (unsigned)(RUN_GIVEN_KERNEL | RUN_GIVEN_INITRD | RUN_GIVEN_APPEND | RUN_GIVEN_MEM));
}

TEST(LibvirtOptions, ExplicitOptionsWinWhereverTheyStand)
{
	const std::string uri = node_uri();
	const std::vector<std::vector<std::string>> orders = {
		{ "--connect", uri, "--domain", "et-x86_64", "--append", "exit=9", "--mem", "48M" },
		{ "--append", "exit=9", "--mem", "48M", "--connect", uri, "--domain", "et-x86_64" },
		{ "--mem", "48M", "--domain", "et-x86_64", "--append", "exit=9", "--connect", uri },
	};
	for (const auto &args : orders) {
		struct run_options o;
		libvirt_domain d;
		ASSERT_EQ(parse_run(args, &o), 0) << et_last_error();
		ASSERT_EQ(libvirt_domain_load(&d, &o), 0) << et_last_error();
		EXPECT_STREQ(o.append, "exit=9");
		EXPECT_EQ(o.mem_size, 48ull << 20);
		// What was not given comes from the domain.
		EXPECT_STREQ(o.kernel, "build/images/x86_64.elf");
		EXPECT_STREQ(o.initrd, "tests/libvirt/initrd.txt");
		libvirt_domain_free(&d);
	}
	// An empty --append is an explicit choice too.
	struct run_options o;
	libvirt_domain d;
	ASSERT_EQ(parse_run({ "--append", "", "--connect", uri, "--domain", "et-x86_64", "-k", "other.elf" }, &o), 0);
	ASSERT_EQ(libvirt_domain_load(&d, &o), 0) << et_last_error();
	EXPECT_STREQ(o.append, "");
	EXPECT_STREQ(o.kernel, "other.elf");
	EXPECT_EQ(o.mem_size, 32ull << 20);
	libvirt_domain_free(&d);
	// Without --domain, loading does nothing.
	ASSERT_EQ(parse_run({ "-k", "k" }, &o), 0);
	ASSERT_EQ(libvirt_domain_load(&d, &o), 0);
	EXPECT_STREQ(o.kernel, "k");
	EXPECT_EQ(o.mem_size, RUN_DEFAULT_MEM);
	libvirt_domain_free(&d);
}

// ---- domain-xml -----------------------------------------------------------

TEST(DomainXml, WritesADefinitionThatReadsBack)
{
	struct run_options o;
	ASSERT_EQ(parse_run({ "-k", std::string(ET_TEST_IMAGES) + "/x86_64.elf", "-i",
			      std::string(ET_TEST_SRCDIR) + "/libvirt/initrd.txt", "-p",
			      "exit=3 a<b & \"c\" 'd'", "-m", "48M" },
			    &o),
		  0);
	libvirt_notes notes{};
	char *xml = domain_xml_write(&o, "et <round> & trip", &notes);
	ASSERT_NE(xml, nullptr) << et_last_error();
	EXPECT_EQ(notes.nr, 0u);
	std::string s(xml);
	EXPECT_EQ(s.find("<?xml"), std::string::npos); // embeddable, as virsh dumpxml prints
	EXPECT_NE(s.find("<domain type=\"kvm\">"), std::string::npos) << s;
	EXPECT_NE(s.find("<vcpu placement=\"static\">1</vcpu>"), std::string::npos) << s;
	EXPECT_NE(s.find("<memory unit=\"KiB\">49152</memory>"), std::string::npos) << s;
	EXPECT_NE(s.find("<cmdline>exit=3 a&lt;b &amp; \"c\" 'd'</cmdline>"), std::string::npos) << s;
	EXPECT_NE(s.find("<on_reboot>destroy</on_reboot>"), std::string::npos) << s;
	EXPECT_NE(s.find("<acpi/>"), std::string::npos) << s;
	// QEMU starts it where KVM refuses MSR 0x10a (AMD, nested KVMs).
	EXPECT_NE(s.find("<cpu mode=\"host-passthrough\" check=\"none\" migratable=\"off\">\n"
			 "    <feature policy=\"disable\" name=\"arch-capabilities\"/>\n  </cpu>"),
		  std::string::npos)
		<< s;

	Parsed p;
	parse_into(p, s);
	ASSERT_EQ(p.ret, 0) << p.error << "\n" << s;
	EXPECT_TRUE(p.notes.empty()) << all_notes(p); // nothing earlytrace would ignore
	EXPECT_STREQ(p.d.name, "et <round> & trip");
	char *abs_kernel = realpath((std::string(ET_TEST_IMAGES) + "/x86_64.elf").c_str(), nullptr);
	ASSERT_NE(abs_kernel, nullptr);
	EXPECT_STREQ(p.d.kernel, abs_kernel); // absolute: libvirt wants them so
	EXPECT_EQ(p.d.initrd[0], '/');
	EXPECT_STREQ(p.d.cmdline, o.append);
	EXPECT_EQ(p.d.mem_size, 48ull << 20);
	free(abs_kernel);
	free(xml);
}

TEST(DomainXml, ReadBackThroughTheTestDriver)
{
	TempDir dir;
	struct run_options o;
	ASSERT_EQ(parse_run({ "-k", std::string(ET_TEST_IMAGES) + "/x86_64.elf", "-p", "exit=4", "-m", "20M" }, &o), 0);
	libvirt_notes notes{};
	char *xml = domain_xml_write(&o, "roundtrip", &notes);
	ASSERT_NE(xml, nullptr) << et_last_error();
	std::string node = dir.file("node.xml");
	FILE *f = fopen(node.c_str(), "w");
	fprintf(f, "<node>\n%s</node>\n", xml);
	fclose(f);
	free(xml);
	libvirt_domain d;
	ASSERT_EQ(libvirt_domain_read(&d, ("test://" + node).c_str(), "roundtrip"), 0) << et_last_error();
	EXPECT_STREQ(d.cmdline, "exit=4");
	EXPECT_EQ(d.mem_size, 20ull << 20);
	EXPECT_EQ(d.notes.nr, 0u) << (d.notes.nr ? d.notes.lines[0] : "");
	libvirt_domain_free(&d);
}

TEST(DomainXml, NotesAndRefusals)
{
	struct run_options o;
	ASSERT_EQ(parse_run({ "-k", std::string(ET_TEST_IMAGES) + "/x86_64.elf", "--timeout", "5",
			      "--symbols", "x.map", "--debug-io", "--boot", "pvh", "--cpu", "nested-pvm" },
			    &o),
		  0);
	libvirt_notes notes{};
	char *xml = domain_xml_write(&o, "n", &notes);
	ASSERT_NE(xml, nullptr) << et_last_error();
	free(xml);
	std::string n;
	for (size_t i = 0; i < notes.nr; i++)
		n += std::string(notes.lines[i]) + "\n";
	for (const char *want : { "--timeout has no place", "--symbols is earlytrace's own",
				  "--debug-io is earlytrace's own", "--boot pvh: QEMU chooses",
				  "--cpu nested-pvm: written as the host's CPU" })
		EXPECT_NE(n.find(want), std::string::npos) << want << "\n" << n;
	libvirt_notes_free(&notes);

	ASSERT_EQ(parse_run({ "-k", "/nonexistent/k.elf" }, &o), 0);
	EXPECT_EQ(domain_xml_write(&o, "n", &notes), nullptr);
	EXPECT_NE(std::string(et_last_error()).find("--kernel /nonexistent/k.elf: No such file"), std::string::npos);
	ASSERT_EQ(parse_run({ "-k", std::string(ET_TEST_IMAGES) + "/x86_64.elf", "-p", "a\x01" "b" }, &o), 0);
	EXPECT_EQ(domain_xml_write(&o, "n", &notes), nullptr);
	EXPECT_NE(std::string(et_last_error()).find("--append: control character 0x01"), std::string::npos);
	ASSERT_EQ(parse_run({ "-k", std::string(ET_TEST_IMAGES) + "/x86_64.elf", "-p", "\xff" }, &o), 0);
	EXPECT_EQ(domain_xml_write(&o, "n", &notes), nullptr);
	EXPECT_NE(std::string(et_last_error()).find("not valid UTF-8"), std::string::npos);
	ASSERT_EQ(parse_run({ "-k", std::string(ET_TEST_IMAGES) + "/x86_64.elf" }, &o), 0);
	EXPECT_EQ(domain_xml_write(&o, "a/b", &notes), nullptr);
	EXPECT_NE(std::string(et_last_error()).find("refuses '/'"), std::string::npos);
	EXPECT_EQ(domain_xml_write(&o, "", &notes), nullptr);
	libvirt_notes_free(&notes);

	char buf[64];
	EXPECT_STREQ(domain_xml_default_name("/boot/vmlinuz-6.1.0-56-cloud-amd64", buf, sizeof(buf)),
		     "earlytrace-vmlinuz-6.1.0-56-cloud-amd64");
	EXPECT_STREQ(domain_xml_default_name("my kernel (1).elf", buf, sizeof(buf)),
		     "earlytrace-my-kernel--1-.elf");
	EXPECT_STREQ(domain_xml_default_name("dir/", buf, sizeof(buf)), "earlytrace-kernel");
}
