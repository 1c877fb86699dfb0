#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""earlytrace's benchmark: every figure side by side with its baseline,
measured in the same run, medians of repeated runs, ratios first, and the
hardware-independent counts (VM exits, guest instructions) beside the
times. Run through bench/performance.sh, which installs what it needs.

    bench/performance.py [--quick] [--runs N] [--out docs/performance.md]

Sections (each prints its table as it finishes; the Markdown file gets
all of them):
  start    VMM start to first guest instruction (and exit), vs QEMU
  memory   VMM memory beyond guest RAM and trace buffers
  events   per-event cost by mode on the test kernel (repeat=N call tree)
  smp      per-event cost with N vCPUs (N = min(4, what KVM recommends))
           against 1, in the same run: the test kernel's per-CPU trees
  graph    durations without the tracer's cost: the call tree with --graph, as
           recorded and corrected, against the tree alone
  linux    the Debian kernel's early phase, untraced / int3 / trampoline
  qemu     the Debian kernel's boot milestones, earlytrace vs QEMU+KVM
  gdb      the baseline a user has today: QEMU's gdbstub, hbreak __fentry__
  host     the VMM's user-space cost per breakpoint exit; report conversion
"""
import argparse
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from guest_facts import cpu_model_params, fentry_address

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ET = os.path.join(ROOT, "build", "earlytrace")
IMG = os.path.join(ROOT, "build", "images", "x86_64.elf")
CT_CALLS = 816  # calls of one call-tree phase (images/common/calltree.c)
# Guest instructions per recorded call, counted on the code that runs: the
# site's call plus the path to the ret of the trampoline template and of
# guestlib's __fentry__ in build/images/x86_64.elf (both counted with
# capstone by tests/unit/test_trampolines.cc: 20 and 29; before issue 19,
# 26 and 68). An int3 is one instruction and an exit.
INSNS = {"int3": "1 + exit", "trampoline": "20", "guest ring": "29"}


def log(*a):
    print("bench:", *a, file=sys.stderr, flush=True)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.mean(xs) if xs else None


def fmt(x, unit="", nd=2):
    if x is None:
        return "-"
    if isinstance(x, float):
        return ("%." + str(nd) + "f%s") % (x, unit)
    return "%s%s" % (x, unit)


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


class Run:
    """One process: wall time, output, milestones stamped as lines arrive,
    and the peak of its resident memory outside the given mappings."""

    def __init__(self, argv, marks=(), exclude_sizes=(), timeout=1800, env=None, sample=True):
        self.argv, self.marks, self.exclude = argv, marks, set(exclude_sizes)
        self.sample = sample
        self.timeout, self.env = timeout, env
        self.stamps, self.out, self.err = {}, [], ""
        self.peak_kb = None
        self.samples = []
        self.status = None

    def _sample(self, pid, stop):
        while not stop.is_set():
            kb = vmm_overhead_kb(pid, self.exclude)
            if kb is not None:
                self.samples.append((time.monotonic() - self.t0, kb))
                self.peak_kb = kb if self.peak_kb is None else \
                    (max(self.peak_kb[0], kb[0]), max(self.peak_kb[1], kb[1]))
            stop.wait(0.05)

    def peak_since(self, mark):
        """The peak (resident, private dirty) from milestone `mark` on."""
        t = self.stamps.get(mark)
        kbs = [kb for ts, kb in self.samples if t is not None and ts >= t]
        return (max(k[0] for k in kbs), max(k[1] for k in kbs)) if kbs else None

    def go(self):
        t0 = self.t0 = time.monotonic()
        p = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=self.env, cwd=ROOT)
        stop = threading.Event()
        sampler = threading.Thread(target=self._sample if self.sample else lambda *a: None,
                                   args=(p.pid, stop), daemon=True)
        sampler.start()
        errbuf = []
        et = threading.Thread(target=lambda: errbuf.append(p.stderr.read()), daemon=True)
        et.start()
        for raw in p.stdout:
            line = raw.decode(errors="replace")
            self.out.append(line)
            for name, pat in self.marks:
                if name not in self.stamps and pat in line:
                    self.stamps[name] = time.monotonic() - t0
        # wait4: the child's own CPU time, user (the VMM's code) and system
        # (mostly KVM's ioctls), beside the wall time.
        _, status, ru = os.wait4(p.pid, 0)
        self.wall = time.monotonic() - t0
        p.returncode = self.status = os.waitstatus_to_exitcode(status)
        self.user, self.sys = ru.ru_utime, ru.ru_stime
        stop.set()
        sampler.join()
        et.join()
        self.err = errbuf[0].decode(errors="replace") if errbuf else ""
        return self

    def calls(self):
        """Function calls in the trace (the final line's 'N calls')."""
        m = re.search(r"trace: \d+ events: (\d+) calls,", self.err)
        return int(m.group(1)) if m else None

    def count(self, pattern):
        m = re.search(pattern, self.err)
        return int(m.group(1)) if m else None


def vmm_overhead_kb(pid, exclude_sizes_kb):
    """(resident, private dirty) KiB of pid outside the mappings whose size
    is in exclude_sizes_kb (guest RAM, the host trace buffer) and the trace
    file's mapping (its page cache, written through it). Resident
    counts the shared libraries' pages too; private dirty is the memory the
    VMM itself wrote: its heap and data."""
    try:
        with open("/proc/%d/smaps" % pid) as f:
            rss = dirty = 0
            size = None
            trace_file = False
            for line in f:
                if re.match(r"[0-9a-f]+-[0-9a-f]+ ", line):
                    # The trace file's mapping is the output's page cache:
                    # a buffer, like the host trace buffer.
                    trace_file = line.rstrip().endswith(".trace")
                elif line.startswith("Size:"):
                    size = int(line.split()[1])
                elif size in exclude_sizes_kb or trace_file:
                    continue
                elif line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Private_Dirty:"):
                    dirty += int(line.split()[1])
            return (rss, dirty)
    except (OSError, ValueError):
        return None


def repeat(n, make):
    return [make().go() for _ in range(n)]


# ---------------------------------------------------------------- sections

def section_start(a, tiny):
    """VMM start to the guest's first instruction: the tiny guest's first
    act is a line on COM1, stamped as it reaches the VMM's standard output;
    then it ends the run, and the process's end (VM teardown included) is
    a second figure. No memory sampling here: it would compete for CPU."""
    n = 10 if a.quick else 40
    mark = [("first", "!")]
    et = [Run([ET, "run", "--kernel", tiny, "--mem", "16M"], marks=mark, sample=False).go()
          for _ in range(n)]
    qemu = [Run(["qemu-system-x86_64", "-M", "microvm,x-option-roms=off,rtc=off",
                 "-enable-kvm", "-cpu", "host,-arch-capabilities", "-m", "16M", "-nodefaults",
                 "-no-user-config", "-display", "none", "-serial", "stdio", "-kernel", tiny,
                 "-device", "isa-debug-exit,iobase=0xf4,iosize=4"], marks=mark,
                sample=False).go() for _ in range(n)]
    rows = []
    # CPU times are sampled at the scheduler's tick: their mean over the
    # runs is meaningful where a median of a few ticks is not.
    for what, get, avg in (("to the first guest instruction (its first console line)",
                            lambda r: r.stamps.get("first"), median),
                           ("whole run: start, one line, exit, teardown", lambda r: r.wall, median),
                           ("user CPU, mean (the VMM's own code)", lambda r: r.user, mean),
                           ("system CPU, mean (KVM ioctls, mapping RAM)", lambda r: r.sys, mean)):
        e, q = avg([get(r) for r in et]), avg([get(r) for r in qemu])
        rows.append([what, fmt(e and e * 1e3, " ms"), fmt(q and q * 1e3, " ms"), fmt(ratio(e, q)), ""])
    e = median([r.stamps.get("first") for r in et])
    rows[0][4] = "goal <= 5 ms: %s" % ("met" if e is not None and e <= 0.005 else "not met")
    t1 = ("VMM start to first guest instruction (median of %d)" % n,
          ["", "earlytrace", "QEMU microvm + KVM", "ratio", "note"], [tuple(r) for r in rows])
    return t1, start_breakdown(n)


def start_breakdown(n):
    """bench/start_costs.c: the pieces of earlytrace's start, each timed
    alone: exec and library loading against a libc-only program, and the
    KVM ioctls that build the machine."""
    out = subprocess.run([os.path.join(ROOT, "build", "bench", "start_costs"), ET, str(n)],
                         capture_output=True, text=True).stdout
    v = dict((k, float(x) / 1e6) for k, x in (l.split() for l in out.splitlines() if l.strip()))
    names = [("exec_libc_only_program_ns", "exec and exit of a program linking only libc (/bin/true): the floor"),
             ("exec_earlytrace_version_ns", "exec, library loading and exit of `earlytrace --version`"),
             ("kvm_create_vm_ns", "KVM_CREATE_VM"),
             ("kvm_irqchip_and_pit_ns", "TSS, in-kernel irqchip and PIT"),
             ("kvm_set_user_memory_region_16M_ns", "guest RAM slot (16 MiB, KVM_SET_USER_MEMORY_REGION)"),
             ("kvm_create_vcpu_and_cpuid_ns", "vCPU and its CPUID"),
             ("kvm_vm_teardown_ns", "VM teardown (closing it, after the run)")]
    rows = [(label, fmt(v.get(k), " ms", 3)) for k, label in names]
    kvm = sum(v.get(k, 0) for k, _ in names[2:6])
    rows.append(("KVM's part of the start (the four above)", fmt(kvm, " ms", 3)))
    if "exec_earlytrace_version_ns" in v and "exec_libc_only_program_ns" in v:
        rows.append(("earlytrace's own loading (its exec minus the floor)",
                     fmt(v["exec_earlytrace_version_ns"] - v["exec_libc_only_program_ns"], " ms", 3)))
    return ("Where the start time goes: the pieces timed alone (bench/start_costs.c, median of %d)" % n,
            ["piece", "time"], rows)


def section_memory(a, tiny, linux):
    """Sampled every 50 ms while the VMM runs; the peak after start-up."""
    mib = 1024.0
    rows = []

    def row(name, peak):
        rss, dirty = peak if peak else (None, None)
        rows.append((name, fmt(rss and rss / mib, " MiB"), fmt(dirty and dirty / mib, " MiB"),
                     "met" if dirty is not None and dirty <= 8 * mib else "not met"))

    r = Run([ET, "run", "--kernel", IMG, "--mem", "64M", "--append", "crash=hlt",
             "--timeout", "1.5"], exclude_sizes=[64 * 1024]).go()
    row("run: x86_64 test kernel (64 MiB RAM)", r.peak_kb)
    r = Run([ET, "trace", "--kernel", IMG, "--mem", "64M", "--append", "crash=hlt repeat=20",
             "--timeout", "1.5", "-o", os.devnull], exclude_sizes=[64 * 1024]).go()
    row("trace: x86_64 test kernel (64 MiB trace buffer)", r.peak_kb)
    if linux:
        row("trace: Debian kernel early phase, while the guest runs (after start_kernel)",
            linux.get("running_kb"))
        row("trace: Debian kernel early phase, peak while loading (the 53 MB decompressed "
            "kernel, its symbols and sites, released at attach)", linux.get("peak_kb"))
    return ("VMM memory beyond guest RAM and trace buffers (peaks, sampled every 50 ms)",
            ["run", "resident (incl. shared libraries)", "private dirty (the VMM's own)",
             "goal <= 8 MiB (private)"], rows)


def section_events(a):
    """Per-event cost on the test kernel: the call tree repeated R times."""
    R = 50 if a.quick else 200
    n = R * CT_CALLS
    runs = 1 if a.quick else a.runs
    common = ["--kernel", IMG, "--mem", "32M"]
    untraced = repeat(runs, lambda: Run([ET, "run"] + common + ["--append", "repeat=%d" % R]))
    untraced2 = repeat(runs, lambda: Run([ET, "run"] + common + ["--append", "repeat=%d" % (2 * R)]))
    modes = {}
    for mode in ("int3", "trampoline"):
        modes[mode] = repeat(runs, lambda: Run([ET, "trace"] + common + [
            "--mode", mode, "--filter", "ct_*", "-o", os.devnull, "--append", "repeat=%d" % R]))
    # guestlib's own ring: trace=ring runs the tree twice (untraced, then
    # recorded by the guest), so its baseline is the untraced tree twice.
    ring = repeat(runs, lambda: Run([ET, "run"] + common + ["--append", "trace=ring repeat=%d" % R]))
    tu, tu2 = median([r.wall for r in untraced]), median([r.wall for r in untraced2])
    rows = [("untraced", fmt(tu, " s"), "-", "0", "0", "-")]
    for mode, rs in modes.items():
        t = median([r.wall for r in rs])
        exits = median([r.count(r"cost: (\d+) exits to the VMM") for r in rs])
        rows.append((mode, fmt(t, " s"), fmt((t - tu) / n * 1e9, " ns", 0),
                     fmt(exits / n if exits else None, "", 4), INSNS[mode],
                     fmt(ratio(t, tu))))
    t = median([r.wall for r in ring])
    rows.append(("guest ring (after handoff)", fmt(t, " s"), fmt((t - tu2) / n * 1e9, " ns", 0),
                 "0", INSNS["guest ring"], fmt(ratio(t, tu2))))
    return ("Per-event cost by mode: x86_64 test kernel, %d calls (repeat=%d), median of %d" % (n, R, runs),
            ["mode", "run time", "per event", "exits per event", "guest insns per event",
             "vs untraced"], rows)


SMP_LEAVES = 8  # images/x86_64/smp.h: CPU i calls pc_leaf 8 * (i + 1) times


def kvm_recommended_vcpus():
    """KVM_CAP_NR_VCPUS: the vCPUs KVM recommends here (the host's CPUs)."""
    import fcntl
    kvm_check_extension, kvm_cap_nr_vcpus = 0xAE03, 9
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return 1
    try:
        n = fcntl.ioctl(fd, kvm_check_extension, kvm_cap_nr_vcpus)
    finally:
        os.close(fd)
    return n if n > 0 else 4


def section_smp(a):
    """Per-event cost with N vCPUs against 1, same run: every CPU runs its
    own call tree (smp=only repeat=R); per event = (traced - untraced) wall time
    / the calls recorded, and beside it what the tracer measured per
    breakpoint exit (its user-space work plus the round trip into the
    guest); int3 and trampolines (refused without RDTSCP with several
    vCPUs: said so in the table)."""
    R = 1000 if a.quick else 4000
    runs = a.runs
    N = min(4, kvm_recommended_vcpus())
    if N < 2:
        return ("Per-event cost with several vCPUs: skipped, KVM here recommends 1 vCPU",
                ["mode", "note"], [("-", "KVM_CAP_NR_VCPUS is 1")])
    common = ["--kernel", IMG, "--mem", "32M", "--timeout", "900"]
    calls = {n: R * sum(1 + SMP_LEAVES * (i + 1) for i in range(n)) for n in (1, N)}
    # Not /dev/null: a trace file is locked while written, and other
    # earlytrace runs on this host may be writing /dev/null too.
    out = tempfile.mkdtemp(prefix="et-bench-smp-")
    untraced = {}
    for n in (1, N):
        log("smp untraced", n, "vCPUs")
        untraced[n] = median([r.wall for r in repeat(runs, lambda: Run(
            [ET, "run"] + common + ["--cpus", str(n), "--append", "smp=only repeat=%d exit=0" % R]))])

    def cell(n, mode):
        log("smp", mode, n, "vCPUs")
        traced = repeat(runs, lambda: Run([ET, "trace"] + common + [
            "--cpus", str(n), "--mode", mode, "-f", "pc_*",
            "-o", os.path.join(out, "%s-%d.trace" % (mode, n)),
            "--append", "smp=only repeat=%d exit=0" % R]))
        if any(r.status != 0 for r in traced):
            err = traced[0].err.strip().splitlines()
            line = err[-1] if err else "status %s" % traced[0].status
            return "refused: no RDTSCP" if "RDTSCP" in line else line
        got = traced[0].calls()
        if got != calls[n]:
            return "recorded %s calls, not %d" % (got, calls[n])
        exit_cost = []
        for r in traced:
            m = re.search(r"tracer cost: \d+ breakpoint exits, ([\d.]+) us each in the VMM's "
                          r"user space, ([\d.]+) us into the guest and back", r.err)
            if m:
                exit_cost.append(float(m.group(1)) + float(m.group(2)))
        tt = median([r.wall for r in traced])
        return ((tt - untraced[n]) / calls[n], tt, median(exit_cost) if exit_cost else None)

    per = {(mode, n): cell(n, mode) for mode in ("int3", "trampoline") for n in (1, N)}
    shutil.rmtree(out, ignore_errors=True)

    def show(c, n):
        if not isinstance(c, tuple):
            return c
        return "%s (%d calls, traced %s, untraced %s)" % (
            fmt(c[0] * 1e9, " ns", 0), calls[n], fmt(c[1], " s"), fmt(untraced[n], " s"))

    rows = []
    for mode in ("int3", "trampoline"):
        one, many = per[(mode, 1)], per[(mode, N)]
        both = isinstance(one, tuple) and isinstance(many, tuple)
        rows.append((mode, show(one, 1), show(many, N),
                     fmt(ratio(many[0], one[0])) if both else "-",
                     fmt(one[2], " us") if isinstance(one, tuple) else "-",
                     fmt(many[2], " us") if isinstance(many, tuple) else "-",
                     fmt(ratio(many[2], one[2])) if both else "-"))
    return ("Per-event cost with %d vCPUs against 1 (x86_64 test kernel, smp=only repeat=%d: "
            "every CPU its own tree, nothing else), median of %d" % (N, R, runs),
            ["mode", "1 vCPU: per event (wall)", "%d vCPUs: per event (wall)" % N,
             "%d vCPUs / 1" % N, "1 vCPU: per exit (tracer)", "%d vCPUs: per exit (tracer)" % N,
             "%d / 1 (tracer)" % N], rows)


def realtime_prefix():
    """chrt -f 10 where this user may use it: the VMM then runs at real-time
    priority, so other processes on the host cannot preempt the vCPU
    thread (the guest's TSC counts such waits as guest time). Runs stay
    short: the kernel throttles a real-time thread that has run for
    sched_rt_runtime_us of a sched_rt_period_us (0.95 of every second by
    default), and that wait would be in the guest's TSC again."""
    try:
        if subprocess.run(["chrt", "-f", "10", "true"], capture_output=True).returncode == 0:
            return ["chrt", "-f", "10"]
    except OSError:
        pass
    return []


def section_graph(a):
    """Durations without the tracer's own cost: the test kernel's whole
    call tree (ct_root) with --graph on every ct_* function, as recorded
    and as reported (the OVERHEAD record's exits and the WAIT records'
    host waits taken out), against the same tree with only ct_root
    itself traced, reported the same way (its own exit and the waits
    taken out: the untraced duration, near enough). Means per tree, from
    folded stacks (their self times add up to the roots' durations). Run
    twice: at real-time priority where allowed (no host load in the
    guest's TSC), and as any process runs (the host's other processes in
    it), with the time the vCPU thread waited for a host CPU beside each."""
    R = 20  # about 1.5 s a traced run: under the real-time throttle
    trees = 4 * R  # four phases run the tree
    common = [ET, "trace", "--kernel", IMG, "--mem", "32M", "--graph",
              "--append", "repeat=%d" % R]
    runs = 1 if a.quick else a.runs
    rt = realtime_prefix()
    rows, title_cost = [], ""
    for prefix, how in ((rt, "at real-time priority (chrt -f 10)"), ([], "as any process")):
        if prefix is rt and not rt:
            continue
        base, base_raw, raw, fixed, waited, exits, cost = [], [], [], [], {"root": [], "all": []}, None, ""
        with tempfile.TemporaryDirectory() as d:
            for _ in range(runs):
                for name, flt in (("root", "ct_root"), ("all", "ct_*")):
                    path = os.path.join(d, name + ".trace")
                    r = subprocess.run(prefix + common + ["--filter", flt, "-o", path],
                                       capture_output=True, text=True)
                    w = re.search(r"waited ([\d.]+) ms for a host CPU", r.stderr)
                    if w:
                        waited[name].append(float(w.group(1)))
                    if name == "all":
                        m = re.search(r"tracer cost: (\d+) breakpoint exits, ([\d.]+) us each in "
                                      r"the VMM's user space, ([\d.]+) us into the guest and back "
                                      r"\(([^)]*)\)", r.stderr)
                        if m:
                            exits = int(m.group(1))
                            cost = (float(m.group(2)) + float(m.group(3)), m.group(4))

                    def folded(*extra):
                        out = subprocess.run([ET, "report", path, "-f", "folded"] + list(extra),
                                             capture_output=True, text=True).stdout
                        return sum(int(l.rsplit(" ", 1)[1]) for l in out.splitlines() if l.strip())
                    if name == "root":
                        base.append(folded() / trees)
                        base_raw.append(folded("--raw-durations") / trees)
                    else:
                        raw.append(folded("--raw-durations") / trees)
                        fixed.append(folded() / trees)
        b, br, w, c = median(base), median(base_raw), median(raw), median(fixed)
        # Exits inside one tree beyond the root's own (which the root-only
        # run holds too): what the guest saw each cost against what the
        # VMM measured and took out (as recorded, host waits and all).
        inner = exits / trees - 2 if exits else None
        seen = (w - br) / inner / 1e3 if inner else None
        wr, wa = median(waited["root"]) if waited["root"] else None, \
            median(waited["all"]) if waited["all"] else None
        rows += [("%s: ct_root alone traced (2 exits a tree), its exit and the host's waits "
                  "taken out: the untraced duration" % how,
                  fmt(b / 1e3, " µs", 1), "1.00", "", fmt(wr, " ms", 1), ""),
                 ("%s: every ct_* traced, as recorded (--raw-durations)" % how,
                  fmt(w / 1e3, " µs", 1), fmt(ratio(w, b)),
                  "%s µs seen by the guest, %s µs measured by the VMM (%s)" %
                  (fmt(seen, "", 2), fmt(cost[0] if cost else None, "", 2),
                   cost[1] if cost else "?"),
                  fmt(wa, " ms", 1), ""),
                 ("%s: every ct_* traced, the tracer's exits and the host's waits taken out "
                  "(default)" % how,
                  fmt(c / 1e3, " µs", 1), fmt(ratio(c, b)), "", fmt(wa, " ms", 1),
                  "goal <= 1.10: %s" % ("met" if c <= 1.1 * b else "not met"))]
        title_cost = "%s breakpoint exits a run" % exits
    return ("Durations without the tracer's cost: the test kernel's call tree with --graph, mean "
            "per tree over %d trees, median of %d; %s" % (trees, runs, title_cost),
            ["duration of ct_root", "per tree", "vs untraced", "per exit inside the tree",
             "vCPU thread waited for a host CPU (the run)", "goal"], rows)


def linux_run(k, mode, a):
    argv = [ET, "trace", "--kernel", k, "--mem", "256M", "--append", "console=ttyS0 earlyprintk=ttyS0",
            "--until", "sched_init", "-o", "/tmp/earlytrace-bench-%s.trace" % mode]
    if mode == "untraced":
        # One site (sched_init itself), never hit: --until stops there
        # first; and no VM exits recorded, so nothing is.
        argv += ["--mode", "int3", "--filter", "sched_init", "--no-exits"]
    else:
        argv += ["--mode", mode]
    return Run(argv, marks=[("start_kernel", "Linux version"),
                            ("ftrace_init", "ftrace: allocating")],
               exclude_sizes=[256 * 1024, 64 * 1024]).go()


def section_linux(a, k):
    runs = 1 if a.quick else a.runs
    res = {}
    for i in range(runs):
        for mode in ("untraced", "int3", "trampoline"):
            log("linux %s run %d/%d" % (mode, i + 1, runs))
            res.setdefault(mode, []).append(linux_run(k, mode, a))
    rows = []
    base_f = median([r.stamps.get("ftrace_init") for r in res["untraced"]])
    base_w = median([r.wall for r in res["untraced"]])
    events = None
    for mode, rs in res.items():
        f = median([r.stamps.get("ftrace_init") for r in rs])
        w = median([r.wall for r in rs])
        ev = median([r.calls() for r in rs])
        ex = median([r.count(r"cost: (\d+) exits to the VMM") for r in rs])
        if mode == "int3":
            events = ev
        goal = {"int3": "<= 3x", "trampoline": "<= 1.5x"}.get(mode, "")
        rows.append((mode, fmt(f, " s", 1), fmt(ratio(f, base_f)), fmt(w, " s", 1),
                     fmt(ratio(w, base_w)), fmt(ev), fmt(ex), goal))
    def peak(kbs):
        kbs = [k for k in kbs if k]
        return (max(k[0] for k in kbs), max(k[1] for k in kbs)) if kbs else None
    runs_all = [r for rs in res.values() for r in rs]
    return ("Debian cloud kernel early phase (to ftrace_init, run on to sched_init), median of %d" % runs,
            ["mode", "to ftrace_init", "ratio", "to sched_init", "ratio", "calls", "VM exits", "goal"],
            rows), {"events": events, "int3_wall": median([r.wall for r in res["int3"]]),
                    "tramp_wall": median([r.wall for r in res["trampoline"]]),
                    "base_wall": base_w, "peak_kb": peak([r.peak_kb for r in runs_all]),
                    "running_kb": peak([r.peak_since("start_kernel") for r in runs_all]),
                    "trace": "/tmp/earlytrace-bench-int3.trace"}


FOLLOW_APPEND = ("console=ttyS0 earlycon=uart8250,io,0x3f8 unknown_nmi_panic panic=-1")
# What `trace --follow -f '*_init'` adds itself (it says so on stderr):
# the untraced baseline runs the kernel's own tracer the same way.
FOLLOW_FTRACE = "ftrace=function ftrace_filter=*_init trace_buf_size=4194304 trace_clock=x86-tsc"


def follow_run(k, how):
    """Debian to trace_init, where an NMI panics it: the kernel's own
    function tracer on *_init throughout; earlytrace reads its ring (or
    not, untraced) every 0.1 s."""
    if how == "untraced":
        argv = [ET, "run", "--kernel", k, "--mem", "256M", "--append",
                FOLLOW_APPEND + " " + FOLLOW_FTRACE, "--nmi-at", "trace_init"]
    else:
        argv = [ET, "trace", "--kernel", k, "--mem", "256M", "--append", FOLLOW_APPEND,
                "--follow", "-f", "*_init", "--nmi-at", "trace_init",
                "--follow-period", how, "-o", "/tmp/earlytrace-bench-follow.trace"]
    return Run(argv, marks=[("start_kernel", "Linux version")], sample=False).go()


def section_follow(a, k):
    runs = 1 if a.quick else a.runs
    res = {}
    for i in range(runs):
        for how in ("untraced", "0.1", "0.01"):
            log("follow %s run %d/%d" % (how, i + 1, runs))
            res.setdefault(how, []).append(follow_run(k, how))
    base = median([r.wall for r in res["untraced"]])
    rows = []
    pat = (r"the kernel's ring: (\d+) calls.*? in (\d+) reads \(([0-9.]+) us of VMM time a read")
    for how, rs in res.items():
        w = median([r.wall for r in rs])
        m = [re.search(pat, r.err) for r in rs]
        m = [x for x in m if x]
        if how == "untraced" or not m:
            rows.append(("untraced (kernel's tracer on, not read)" if how == "untraced" else how,
                         fmt(w, " s", 1), fmt(ratio(w, base)), "", "", "", "", ""))
            continue
        ev = median([int(x.group(1)) for x in m])
        reads = median([int(x.group(2)) for x in m])
        us = median([float(x.group(3)) for x in m])
        rate = ev / (reads * us * 1e-6) if reads and us else None
        # The VMM's reading time as a share of the run: unlike the wall
        # ratio, it does not move with the load of a shared host.
        share = 100.0 * reads * us * 1e-6 / w if w else None
        rows.append(("--follow, a read every %s s" % how, fmt(w, " s", 1), fmt(ratio(w, base)),
                     fmt(reads, "", 0), fmt(us, " us", 1), fmt(share, " %", 3), fmt(ev, "", 0),
                     fmt(rate, "", 0)))
    return ("Debian cloud kernel with its own tracer on *_init, to an NMI panic at trace_init: "
            "the cost of reading its ring live (median of %d)" % runs,
            ["run", "wall", "ratio", "reads", "VMM time a read", "VMM reading, share of the run",
             "kernel events read",
             "events read per s of VMM time"], rows)


def section_gdb(a, k, linux):
    """QEMU+KVM with its gdbstub: a hardware breakpoint on __fentry__
    (every early call goes through it until ftrace_init), gdb continuing
    and reading the parent from the stack at each hit."""
    window = 20 if a.quick else 60
    vmlinux = os.path.join(os.path.dirname(k), "vmlinux")
    extra = cpu_model_params()
    port = 12345
    q = subprocess.Popen(["qemu-system-x86_64", "-machine", "q35,accel=kvm", "-cpu",
                          "host,-arch-capabilities", "-m", "256M", "-kernel", vmlinux,
                          "-append", "console=ttyS0 " + extra, "-nographic", "-no-reboot",
                          "-nodefaults", "-display", "none", "-serial", "null",
                          "-gdb", "tcp::%d" % port, "-S"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    script = os.path.join(ROOT, "bench", "gdb_fentry_rate.py")
    fentry = fentry_address(vmlinux)
    try:
        g = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set pagination off",
                            "-ex", "file " + vmlinux, "-ex", "target remote :%d" % port,
                            "-ex", "py WINDOW=%d" % window, "-ex", "py FENTRY=0x%x" % fentry,
                            "-x", script],
                           capture_output=True, text=True, timeout=window + 300)
        m = re.search(r"HITS (\d+) SECONDS ([0-9.]+)", g.stdout + g.stderr)
    finally:
        q.kill()
        q.wait()
    hits, secs = (int(m.group(1)), float(m.group(2))) if m else (None, None)
    stopped = re.search(r"STOPPED at (0x[0-9a-f]+)", g.stdout + g.stderr) if m else None
    if stopped:
        log("gdb: QEMU's guest stopped at %s before the window ended; rate over %.0f s"
            % (stopped.group(1), secs))
    rate = hits / secs if hits and secs else None
    events = linux.get("events") if linux else None
    extrap = events / rate if rate and events else None
    # Per call: gdb's time between hits is almost all its own (the guest
    # runs a few hundred instructions); earlytrace's is the traced phase
    # less the untraced one, over the calls.
    gdb_per = 1 / rate if rate else None
    rows = [("QEMU+KVM gdbstub, hbreak __fentry__", fmt(rate, " calls/s", 0),
             fmt(extrap, " s (extrapolated)", 0), fmt(gdb_per and gdb_per * 1e6, " µs", 0), "-", "-")]
    for name, key in (("earlytrace int3", "int3_wall"), ("earlytrace trampoline", "tramp_wall")):
        w = linux and linux.get(key)
        per = (w - linux["base_wall"]) / events if w and events and linux.get("base_wall") else None
        rows.append((name, fmt(events / w if w and events else None, " calls/s", 0), fmt(w, " s", 1),
                     fmt(per and per * 1e6, " µs", 1), fmt(ratio(extrap, w), "x", 0),
                     fmt(ratio(gdb_per, per), "x", 0)))
    return ("Baseline: gdb on QEMU's gdbstub, %d s window, extrapolated to the early phase's %s calls"
            % (window, fmt(events)),
            ["method", "rate", "early phase", "tracing cost per call", "earlytrace faster: phase",
             "earlytrace faster: per call"], rows)


def section_host(a, linux):
    out = subprocess.run([os.path.join(ROOT, "build", "bench", "host_costs"), "200000"],
                         capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        f = line.split()
        if len(f) != 3:
            continue
        unit = " ns" if f[0].endswith("_ns") else ""
        name = f[0].replace("_ns", "").replace("_", " ")
        cols = [fmt(float(x), unit, 0) if x != "-" else "-" for x in f[1:]]
        rows.append((name, cols[0], cols[1]))
    t1 = ("VMM user-space cost of one breakpoint exit (library code, real vCPU ioctls), "
          "previous design (a TSC ioctl and a write() per exit) and now, side by side in one run",
          ["part", "previous design", "now"], rows)
    rows = []
    trace = linux and linux.get("trace")
    if trace and os.path.exists(trace):
        events = linux["events"]
        times = {}
        for f in ("summary", "csv", "ftrace", "json"):
            ts = []
            for _ in range(1 if a.quick else 3):
                t0 = time.monotonic()
                subprocess.run([ET, "report", trace, "--format", f], stdout=subprocess.DEVNULL)
                ts.append(time.monotonic() - t0)
            times[f] = median(ts)
        for f in ("summary", "csv", "ftrace", "json"):
            rows.append((f, fmt(events / times[f], " events/s", 0), fmt(ratio(times[f], times["summary"]))))
    t2 = ("Report conversion (the Debian early-phase trace, %s events); baseline: summary (read and count only)"
          % fmt(linux and linux.get("events")), ["format", "rate", "time vs summary"], rows)
    return t1, t2


def section_qemu(a):
    """The boot itself against QEMU+KVM: bench/boot-linux.sh stamps the
    serial lines of both VMMs booting the same kernel, initramfs and
    command line. Up to ftrace_init: on nested kvm-pvm neither guest gets
    past its first user-space system call (docs/linux.md)."""
    last = "init" if not os.path.exists("/sys/module/kvm_pvm") else "ftrace_init"
    out = subprocess.run(["bash", os.path.join(ROOT, "bench", "boot-linux.sh"),
                          str(1 if a.quick else a.runs), last],
                         capture_output=True, text=True, cwd=ROOT).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"(start_kernel|ftrace_init|init)\s+(\S+)\s+(\S+)", line)
        if not m:
            continue
        name, e, q = m.group(1), number(m.group(2)), number(m.group(3))
        if name == "init" and e is None and q is None:
            rows.append(("/init", "not reached", "not reached",
                         "- (%s)" % ("nested kvm-pvm: no user-space system calls, docs/linux.md"
                                     if last != "init" else "see the log")))
            continue
        rows.append((name, fmt(e, " s", 1), fmt(q, " s", 1), fmt(ratio(e, q))))
    return ("Debian cloud kernel boot, earlytrace vs QEMU+KVM (same kernel, initramfs, "
            "command line, CPU features), median of %d" % (1 if a.quick else a.runs),
            ["milestone", "earlytrace", "QEMU+KVM", "ratio"], rows)


def number(text):
    try:
        return float(text.rstrip("s"))
    except ValueError:
        return None


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    # bench/performance.sh names it (scripts/with-kvm.sh --which): this
    # machine's, or the nested test VM's KVM under QEMU's TCG.
    kvm = os.environ.get("EARLYTRACE_BENCH_KVM", "").removeprefix("KVM: ") or \
        ("nested kvm-pvm" if os.path.exists("/sys/module/kvm_pvm") else
         "kvm_intel" if os.path.exists("/sys/module/kvm_intel") else
         "kvm_amd" if os.path.exists("/sys/module/kvm_amd") else "unknown KVM")
    return "%s, %d CPUs, Linux %s, %s" % (model, os.cpu_count(), platform.release(), kvm)


def table(title, head, rows):
    s = "### %s\n\n| %s |\n|%s\n" % (title, " | ".join(head), "---|" * len(head))
    for r in rows:
        s += "| %s |\n" % " | ".join(str(c) for c in r)
    return s + "\n"


SECTIONS = ("start", "events", "smp", "graph", "linux", "follow", "qemu", "memory", "gdb", "host")


def merge_results(doc, fresh, stamp):
    """The document with its results block rewritten: each section run now
    replaces its own part (marked <!-- section NAME -->), the sections not
    run keep theirs, with the date and machine they were measured on."""
    begin, end = "<!-- results:begin -->\n", "<!-- results:end -->\n"
    if begin not in doc or end not in doc:
        doc += "\n" + begin + end
    head, rest = doc.split(begin, 1)
    block, tail = rest.split(end, 1)
    parts = dict(re.findall(r"<!-- section (\w+) -->\n(.*?)(?=<!-- section \w+ -->\n|\Z)",
                            block, re.S))
    for name, tables in fresh.items():
        parts[name] = "_%s_\n\n%s" % (stamp, "".join(table(*t) for t in tables))
    block = "".join("<!-- section %s -->\n%s" % (n, parts[n]) for n in SECTIONS if n in parts)
    return head + begin + block + end + tail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    ap.add_argument("--tiny", required=True)
    ap.add_argument("--kernel", default="")
    ap.add_argument("--only", default=",".join(SECTIONS))
    a = ap.parse_args()
    only = set(a.only.split(","))
    unknown = only - set(SECTIONS)
    if unknown:
        ap.error("--only: unknown section(s) %s; the sections are %s" %
                 (", ".join(sorted(unknown)), ",".join(SECTIONS)))
    fresh = {}

    def emit(name, t):
        fresh.setdefault(name, []).append(t)
        print(table(*t), flush=True)

    if "start" in only:
        log("start")
        for t in section_start(a, a.tiny):
            emit("start", t)
    if "events" in only:
        log("events")
        emit("events", section_events(a))
    if "smp" in only:
        log("smp")
        emit("smp", section_smp(a))
    if "graph" in only:
        log("graph")
        emit("graph", section_graph(a))
    linux = None
    if a.kernel and "linux" in only:
        t, linux = section_linux(a, a.kernel)
        emit("linux", t)
    if a.kernel and "follow" in only:
        emit("follow", section_follow(a, a.kernel))
    if a.kernel and "qemu" in only:
        log("qemu")
        emit("qemu", section_qemu(a))
    if "memory" in only:
        log("memory")
        emit("memory", section_memory(a, a.tiny, linux))
    if a.kernel and "gdb" in only:
        log("gdb")
        emit("gdb", section_gdb(a, a.kernel, linux))
    if "host" in only:
        log("host")
        for t in section_host(a, linux):
            emit("host", t)
    # Only the results block changes; the prose around it (what the
    # figures mean, which goals are not met and why) is written by people.
    stamp = "Measured %s on %s%s, with `bench/performance.sh%s%s`." % (
        datetime.date.today(), machine(), " (quick mode)" if a.quick else "",
        " --quick" if a.quick else "", " --runs %d" % a.runs if a.runs != 3 else "")
    doc = open(a.out).read() if os.path.exists(a.out) else "# Performance\n\n"
    with open(a.out, "w") as f:
        f.write(merge_results(doc, fresh, stamp))
    log("wrote", a.out)


if __name__ == "__main__":
    main()
