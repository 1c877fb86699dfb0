#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the committed seed corpora, tests/fuzz-corpus/<target>/.

Every seed is small (well under 100 KB) and made here from scratch, so the
corpus does not depend on a build: tiny x86 kernels (ELF64 and ELF32 with
notes, .symtab, __mcount_loc and a .text/.rodata gap), bzImages around
them in every supported compression, System.map text, kallsyms tables in
each layout the decoder knows, trace files with every record type, and
scripts for the guest-memory targets in the formats fuzz/targets_*.c read.
fuzz/run.sh adds larger seeds made from build/ at run time (the test
kernels, their System.map, a real trace).

    python3 fuzz/make_seeds.py          # rewrites tests/fuzz-corpus/
    python3 fuzz/make_seeds.py --real   # also the seeds that need a built
                                        # earlytrace and /dev/kvm

Needs the lz4 and zstd command-line tools (gzip, xz and lzma are Python's).
The output is deterministic.
"""
import gzip
import lzma
import os
import struct
import subprocess
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fuzz-corpus")


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    assert len(data) < 100 * 1024, (target, name, len(data))
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def u8(v): return struct.pack("<B", v & 0xff)
def u16(v): return struct.pack("<H", v & 0xffff)
def u32(v): return struct.pack("<I", v & 0xffffffff)
def u64(v): return struct.pack("<Q", v & 0xffffffffffffffff)


# ---- tiny kernels -------------------------------------------------------

NOP5 = bytes([0x0f, 0x1f, 0x44, 0x00, 0x00])
ENDBR64 = bytes([0xf3, 0x0f, 0x1e, 0xfa])


def note(name, ntype, desc):
    n = name + b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return u32(len(n)) + u32(len(desc)) + u32(ntype) + pad(n) + pad(desc)


def tiny_kernel(bits, pvh=True, gap=512):
    """An ET_EXEC x86 kernel: one PT_LOAD (.text, a 0xcc gap, .rodata,
    __mcount_loc), a PT_NOTE (Xen PVH entry, Linux, GNU build-id), and
    section headers with .symtab. Virtual addresses differ from physical
    ones, as in Linux."""
    is64 = bits == 64
    ptr = 8 if is64 else 4
    paddr0 = 0x100000
    vbase = 0xffffffff81000000 if is64 else 0xc1000000
    ehsize, phentsize, shentsize = (64, 56, 64) if is64 else (52, 32, 40)
    text_off = 0x100

    # .text: startup (entry), three traceable functions, __fentry__.
    funcs = {}
    text = bytearray()

    def func(name, body):
        funcs[name] = len(text)
        text.extend(body)
        while len(text) % 16:
            text.append(0xcc)

    func("startup", bytes([0xf4, 0xeb, 0xfd]))  # hlt; jmp hlt
    func("fentry_nop", NOP5 + b"\xc3")
    func("fentry_call", b"\xe8" + b"\0\0\0\0" + b"\xc3")  # rel32 patched below
    func("fentry_endbr", ENDBR64 + NOP5 + b"\xc3")
    func("__fentry__", b"\xc3")
    rel = funcs["__fentry__"] - (funcs["fentry_call"] + 5)
    text[funcs["fentry_call"] + 1:funcs["fentry_call"] + 5] = struct.pack("<i", rel)
    sites = [funcs["fentry_nop"], funcs["fentry_call"], funcs["fentry_endbr"] + 4]

    gap_bytes = b"\xcc" * gap
    rodata = b"earlytrace fuzz seed kernel\0".ljust(64, b"\0")
    mcount = b"".join((u64 if is64 else u32)(vbase + text_off + s) for s in sites)

    text_at = text_off
    rodata_at = text_at + len(text) + len(gap_bytes)
    mcount_at = rodata_at + len(rodata)
    load_end = mcount_at + len(mcount)
    v = lambda off: vbase + off
    p = lambda off: paddr0 + off

    notes = b""
    if pvh:
        notes += note(b"Xen", 18, (u64 if is64 else u32)(p(text_at + funcs["startup"])))
    notes += note(b"Linux", 6, b"6.1.0")
    notes += note(b"GNU", 3, bytes(range(1, 21)))
    notes_at = load_end

    syms = [  # name, offset in the load segment, size, type (STT_FUNC=2, NOTYPE=0, OBJECT=1)
        ("_text", text_at, 0, 0),
        ("startup_64" if is64 else "startup_32", text_at + funcs["startup"], 3, 2),
        ("fentry_nop", text_at + funcs["fentry_nop"], 6, 2),
        ("fentry_call", text_at + funcs["fentry_call"], 6, 2),
        ("fentry_endbr", text_at + funcs["fentry_endbr"], 10, 2),
        ("__fentry__", text_at + funcs["__fentry__"], 1, 2),
        ("_etext", text_at + len(text), 0, 0),
        ("__start_rodata", rodata_at, 0, 0),
        ("banner", rodata_at, len(rodata), 1),
        ("__start_mcount_loc", mcount_at, 0, 0),
        ("__stop_mcount_loc", load_end, 0, 0),
    ]
    strtab = b"\0"
    sym_name = {}
    for s in syms:
        sym_name[s[0]] = len(strtab)
        strtab += s[0].encode() + b"\0"
    secs = [".text", ".rodata", "__mcount_loc", ".notes", ".symtab", ".strtab", ".shstrtab"]
    shstrtab = b"\0"
    sec_name = {}
    for s in secs:
        sec_name[s] = len(shstrtab)
        shstrtab += s.encode() + b"\0"

    # .text index 1, .rodata 2, __mcount_loc 3
    def sym(name, off, size, stype):
        shndx = 1 if off < rodata_at else (2 if off < mcount_at else 3)
        info = (1 << 4) | stype  # STB_GLOBAL
        if is64:
            return u32(sym_name[name]) + u8(info) + u8(0) + u16(shndx) + u64(v(off)) + u64(size)
        return u32(sym_name[name]) + u32(v(off)) + u32(size) + u8(info) + u8(0) + u16(shndx)

    symtab = (b"\0" * (24 if is64 else 16)) + b"".join(sym(*s) for s in syms)
    symtab_at = notes_at + len(notes)
    symtab_at += -symtab_at % 8
    strtab_at = symtab_at + len(symtab)
    shstrtab_at = strtab_at + len(strtab)
    shoff = shstrtab_at + len(shstrtab)
    shoff += -shoff % 8

    def shdr(name, stype, flags, addr, off, size, link=0, info=0, align=1, entsize=0):
        if is64:
            return (u32(name) + u32(stype) + u64(flags) + u64(addr) + u64(off) + u64(size) +
                    u32(link) + u32(info) + u64(align) + u64(entsize))
        return (u32(name) + u32(stype) + u32(flags) + u32(addr) + u32(off) + u32(size) +
                u32(link) + u32(info) + u32(align) + u32(entsize))

    SHF_WA, SHF_AX, SHF_A = 3, 6, 2
    shdrs = [
        shdr(0, 0, 0, 0, 0, 0),
        shdr(sec_name[".text"], 1, SHF_AX, v(text_at), text_at, len(text), align=16),
        shdr(sec_name[".rodata"], 1, SHF_A, v(rodata_at), rodata_at, len(rodata), align=16),
        shdr(sec_name["__mcount_loc"], 1, SHF_A, v(mcount_at), mcount_at, len(mcount), align=ptr),
        shdr(sec_name[".notes"], 7, SHF_A, 0, notes_at, len(notes), align=4),
        shdr(sec_name[".symtab"], 2, 0, 0, symtab_at, len(symtab), link=6, info=1, align=8,
             entsize=24 if is64 else 16),
        shdr(sec_name[".strtab"], 3, 0, 0, strtab_at, len(strtab)),
        shdr(sec_name[".shstrtab"], 3, 0, 0, shstrtab_at, len(shstrtab)),
    ]

    def phdr(ptype, flags, off, vaddr, paddr, filesz, memsz, align):
        if is64:
            return (u32(ptype) + u32(flags) + u64(off) + u64(vaddr) + u64(paddr) + u64(filesz) +
                    u64(memsz) + u64(align))
        return (u32(ptype) + u32(off) + u32(vaddr) + u32(paddr) + u32(filesz) + u32(memsz) +
                u32(flags) + u32(align))

    phdrs = [
        phdr(1, 5, 0, v(0), p(0), load_end, load_end + 0x1000, 0x1000),  # PT_LOAD R+X, .bss tail
        phdr(4, 4, notes_at, 0, 0, len(notes), len(notes), 4),            # PT_NOTE
    ]
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1, 1, 0]) + b"\0" * 8
    entry = p(text_at + funcs["startup"])
    if is64:
        eh = (ident + u16(2) + u16(62) + u32(1) + u64(entry) + u64(ehsize) + u64(shoff) + u32(0) +
              u16(ehsize) + u16(phentsize) + u16(len(phdrs)) + u16(shentsize) +
              u16(len(shdrs)) + u16(len(shdrs) - 1))
    else:
        eh = (ident + u16(2) + u16(3) + u32(1) + u32(entry) + u32(ehsize) + u32(shoff) + u32(0) +
              u16(ehsize) + u16(phentsize) + u16(len(phdrs)) + u16(shentsize) +
              u16(len(shdrs)) + u16(len(shdrs) - 1))
    img = bytearray(shoff + len(shdrs) * shentsize)
    img[0:len(eh)] = eh
    ph = b"".join(phdrs)
    img[ehsize:ehsize + len(ph)] = ph
    img[text_at:text_at + len(text)] = text
    img[text_at + len(text):rodata_at] = gap_bytes
    img[rodata_at:mcount_at] = rodata
    img[mcount_at:load_end] = mcount
    img[notes_at:notes_at + len(notes)] = notes
    img[symtab_at:strtab_at] = symtab
    img[strtab_at:shstrtab_at] = strtab
    img[shstrtab_at:shstrtab_at + len(shstrtab)] = shstrtab
    sh = b"".join(shdrs)
    img[shoff:shoff + len(sh)] = sh
    return bytes(img)


def seeds_elf():
    k64 = tiny_kernel(64)
    write("elf", "tiny64.elf", k64)
    write("elf", "tiny32.elf", tiny_kernel(32))
    write("elf", "tiny64-linux64.elf", tiny_kernel(64, pvh=False, gap=64))
    # Cut short: inside the program headers, and inside the section headers.
    write("elf", "tiny64-truncated.elf", k64[:100])
    write("elf", "tiny64-no-shdrs.elf", k64[:len(k64) - 200])
    return k64


# ---- bzImages -----------------------------------------------------------

def lz4_legacy(data):
    return subprocess.run(["lz4", "-l", "-9", "-c"], input=data, stdout=subprocess.PIPE,
                          check=True).stdout


def zstd(data):
    return subprocess.run(["zstd", "-19", "-c", "-q"], input=data, stdout=subprocess.PIPE,
                          check=True).stdout


def make_bzimage(compressed, kernel_size, version=0x020f):
    """As tests/unit/test_bzimage.cc builds them."""
    setup_sects = 3
    setup = (setup_sects + 1) * 512
    payload_offset = 0x300
    img = bytearray(setup + payload_offset)
    img[0x1f1] = setup_sects
    img[0x1fe:0x200] = b"\x55\xaa"
    img[0x200] = 0xeb
    img[0x201] = 0x6a  # header ends at 0x26c
    img[0x202:0x206] = b"HdrS"
    img[0x206:0x208] = u16(version)
    img[0x211] = 0x01
    img[0x236:0x238] = u16(0x7f)
    img[0x238:0x23c] = u32(2047)
    img[0x22c:0x230] = u32(0x7fffffff)
    img[0x248:0x24c] = u32(payload_offset)
    img[0x24c:0x250] = u32(len(compressed) + 4)
    img += compressed + u32(kernel_size) + b"\0" * 512
    return bytes(img)


def seeds_bzimage(kernel):
    codecs = {
        "gzip": lambda b: gzip.compress(b, 9, mtime=0),
        "xz": lambda b: lzma.compress(b, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32),
        "lzma": lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE),
        "lz4": lz4_legacy,
        "zstd": zstd,
    }
    for name, fn in codecs.items():
        c = fn(kernel)
        write("bzimage", "tiny64-%s.bzImage" % name, make_bzimage(c, len(kernel)))
        # The bare-payload form fuzz_bzimage() also takes: u32 size + data.
        write("bzimage", "payload-%s.bin" % name, u32(len(kernel)) + c)
    write("bzimage", "tiny64-uncompressed.bzImage", make_bzimage(kernel, len(kernel)))
    write("bzimage", "old-protocol.bzImage", make_bzimage(b"\x1f\x8b", 100, version=0x0207))


# ---- System.map ---------------------------------------------------------

def seeds_system_map():
    lines = [
        "0000000000000000 D __per_cpu_start",
        "0000000000001000 A __abs_symbol",
        "ffffffff81000000 T _text",
        "ffffffff81000000 T startup_64",
        "ffffffff81000040 T secondary_startup_64",
        "ffffffff81000100 t fentry_nop",
        "ffffffff81000110 t fentry_call",
        "ffffffff81000120 W weak_function",
        "ffffffff81000130 T __fentry__",
        "ffffffff81000200 T _etext",
        "ffffffff81200000 R __start_rodata",
        "ffffffff81200100 R __start_mcount_loc",
        "ffffffff81200180 R __stop_mcount_loc",
        "ffffffff81400000 D _sdata",
        "ffffffff81500000 B __bss_start",
        "                 U undefined_symbol",
        "                 w weak_undefined",
        "ffffffffa0000000 t module_fn\t[some_module]",
    ]
    write("system_map", "x86_64.map", ("\n".join(lines) + "\n").encode())
    write("system_map", "crlf.map", ("\r\n".join(lines[:6]) + "\r\n").encode())
    write("system_map", "i386.map", b"c1000000 T _text\nc1000000 T startup_32\n"
          b"c1000100 t fentry_nop\nc1000200 T _etext\n")
    write("system_map", "bad-line.map", b"ffffffff81000000 T _text\nnot a map line\n")
    # A slice of the Debian cloud kernel's map, if the fixture is there.
    fixture = os.path.join(ROOT, "tests", "fixtures", "System.map-6.1.0-56-cloud-amd64.text.xz")
    if os.path.exists(fixture):
        with open(fixture, "rb") as f:
            text = lzma.decompress(f.read())
        write("system_map", "debian-6.1-head.map", b"\n".join(text.split(b"\n")[:400]) + b"\n")


# ---- kallsyms -----------------------------------------------------------

class KallsymsEncoder:
    """scripts/kallsyms' tables, as the Encoder in tests/unit/test_kallsyms.cc."""

    def __init__(self, ptr, new_order, seqs, mode, marker_size):
        self.ptr, self.new_order, self.seqs = ptr, new_order, seqs
        self.mode, self.marker_size = mode, marker_size
        self.tok = []
        for i in range(256):
            if 0x20 < i < 0x7f:
                self.tok.append(bytes([i]))
            else:
                self.tok.append(b"_" + bytes([ord("a") + i % 26, ord("a") + i // 26 % 26]))

    def put(self, v, n):
        self.out += (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")

    def label(self):
        while len(self.out) % self.ptr:
            self.out.append(0)

    def compress(self, s):
        e, i = [], 0
        while i < len(s):
            best = s[i]
            for t in range(256):
                if len(self.tok[t]) == 3 and s[i:i + 3] == self.tok[t]:
                    best = t
            e.append(best)
            i += len(self.tok[best])
        return bytes(e)

    def addresses(self, syms, base):
        self.label()
        for addr, _, _ in syms:
            if self.mode == "absolute":
                self.put(addr, self.ptr)
            elif self.mode == "relative":
                self.put(addr - base, 4)
            elif addr < base:
                self.put(addr, 4)
            else:
                self.put(base - 1 - addr, 4)
        if self.mode != "absolute":
            self.label()
            self.put(base, self.ptr)

    def seqs_table(self, n):
        self.label()
        for i in range(n):
            self.out += bytes([(i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff])

    def encode(self, syms, base):
        self.out = bytearray(b"\xab" * 100)
        if not self.new_order:
            self.addresses(syms, base)
        self.label()
        self.put(len(syms), 4)
        self.label()
        markers, names = [], len(self.out)
        for i, (_, typ, name) in enumerate(syms):
            if i % 256 == 0:
                markers.append(len(self.out) - names)
            e = self.compress(typ + name)
            if len(e) > 127:
                self.out += bytes([0x80 | (len(e) & 0x7f), len(e) >> 7])
            else:
                self.out.append(len(e))
            self.out += e
        self.label()
        for m in markers:
            self.put(m, self.marker_size)
        if self.seqs and not self.new_order:
            self.seqs_table(len(syms))
        self.label()
        index, table = [], len(self.out)
        for t in self.tok:
            index.append(len(self.out) - table)
            self.out += t + b"\0"
        self.label()
        for i in index:
            self.put(i, 2)
        if self.new_order:
            self.addresses(syms, base)
            if self.seqs:
                self.seqs_table(len(syms))
        self.out += b"\xcd" * 64
        return bytes(self.out)


def kallsyms_symbols(n, ptr, percpu):
    text = 0xffffffff81000000 if ptr == 8 else 0xc1000000
    v = []
    if percpu:
        v += [(0, b"D", b"__per_cpu_start"), (0x40, b"D", b"fixed_percpu_data")]
    v += [(text, b"T", b"_text"), (text, b"T", b"startup_64")]
    i = 0
    while len(v) < n:
        name = b"fn_%d" % i + (b"_abc_xyz" if i % 7 == 0 else b"")
        if i == 300:
            name = b"q" * 200
        v.append((text + 0x10 * (i + 1), b"t" if i % 3 else b"T", name))
        i += 1
    v.append((text + 0x10 * (n + 10), b"R", b"__start_mcount_loc"))
    return v


def seeds_kallsyms():
    layouts = [  # ptr, new_order, seqs, mode, marker_size, symbols
        (8, False, False, "absolute", 8, 20),
        (8, False, False, "percpu", 4, 20),
        (8, False, True, "percpu", 4, 20),
        (8, True, True, "percpu", 4, 20),
        (8, True, False, "relative", 4, 300),
        (4, False, False, "absolute", 4, 20),
        (4, True, True, "relative", 4, 20),
    ]
    for ptr, new, seqs, mode, ms, n in layouts:
        base = 0xffffffff81000000 if ptr == 8 else 0xc1000000
        syms = kallsyms_symbols(n, ptr, mode in ("percpu", "absolute"))
        blob = KallsymsEncoder(ptr, new, seqs, mode, ms).encode(syms, base)
        name = "ptr%d-%s-%s%s-n%d.bin" % (ptr, "6.4" if new else "old", mode,
                                          "-seqs" if seqs else "", n)
        write("kallsyms", name, blob)


# ---- trace files --------------------------------------------------------

def record(rtype, payload):
    hdr = u32(rtype) + u32(len(payload))
    return hdr + payload + u32(zlib.crc32(hdr + payload))


def trace_string(s):
    return u16(len(s)) + s


def trace_file(events=5, end=True, cut=0):
    out = b"ETTRACE\0" + u32(1) + u32(16)
    meta = u64(2500000) + u64(1700000000 * 10**9)
    for s in (b"0.1.0", b"build/images/x86_64.elf", b"0123456789abcdef", b"kernel .symtab (3 symbols)",
              b"trampoline"):
        meta += trace_string(s)
    out += record(1, meta)
    syms = [(0xffffffff81000100, 6, b"T", b"ct_root"), (0xffffffff81000110, 6, b"t", b"ct_leaf"),
            (0xffffffff81000120, 16, b"T", b"ct_fib")]
    payload = u32(len(syms))
    for addr, size, typ, name in syms:
        payload += u64(addr) + u64(size) + typ + b"\0" + u16(len(name)) + name
    out += record(2, payload)
    out += record(8, u64(900))  # CLOCK: time zero
    out += record(5, u64(0) + u64(1000) + b"handoff: guest ring at 0x10000")
    evs = b""
    for i in range(events):
        evs += (u64(1000 + 10 * i) + u64(syms[i % 3][0]) + u64(syms[0][0] + 5) + u32(i % 2) +
                u16(1) + u16(1 + i % 3))
    out += record(3, evs)
    # WAIT: tsc, cpu, flags, ticks (the host thread's waits, per CPU)
    out += record(10, u64(1025) + u32(0) + u32(0) + u64(7))
    out += record(10, u64(1015) + u32(1) + u32(0) + u64(3))
    out += record(4, u64(3) + u64(2000) + b"host buffer full (--overflow stop)")
    if end:
        # OVERHEAD: tsc, exits, exit_ticks, drains, drain_ticks, rest_ticks,
        # waited_ticks, flags (waited known, rest timed in the run)
        out += record(9, u64(2100) + u64(events) + u64(50 * events) + u64(1) + u64(40) + u64(5) +
                      u64(700) + u64(3))
        out += record(6, u64(events + 3) + u64(events) + u64(3) + u64(0) + b"debug-exit port")
    return out[:len(out) - cut] if cut else out


def seeds_trace_reader():
    # tracedat_readback (the trace.dat writer read back) takes trace files too.
    for target in ("trace_reader", "tracedat_readback"):
        write(target, "all-records.trace", trace_file())
        write(target, "no-end.trace", trace_file(events=40, end=False))
        write(target, "truncated.trace", trace_file(cut=7))
        write(target, "header-only.trace", b"ETTRACE\0" + u32(1) + u32(16))


def seeds_trace_real():
    """A short real trace (needs build/earlytrace, the test kernel, /dev/kvm)."""
    path = "/tmp/earlytrace-seed.trace"
    subprocess.run([os.path.join(ROOT, "build", "earlytrace"), "trace", "--kernel",
                    os.path.join(ROOT, "build", "images", "x86_64.elf"), "--filter", "ct_*",
                    "--max-events", "24", "-o", path], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(path, "rb") as f:
        real = f.read()
    write("trace_reader", "x86_64-ct-24.trace", real)
    write("tracedat_readback", "x86_64-ct-24.trace", real)
    os.unlink(path)


# ---- the hypercall port (script format: fuzz_hypercall in targets_guest.c) ----

HC_WRITE, HC_BLOCK, HC_RING, HC_STRING, HC_IO, HC_EVENTS, HC_REFS = range(7)
HIGH = 0x80000000  # the script's bit for "high RAM" (4 GiB + offset)


def hc_block(gpa, nr, arg0, arg1, version=0):
    return u8(HC_BLOCK) + u32(gpa) + u8(version) + u8(nr) + u64(arg0) + u64(arg1)


def hc_ring(gpa, capacity, head=0, damage=0, tsc_khz=0):
    return u8(HC_RING) + u32(gpa) + u32(capacity) + u64(head) + u8(damage) + u64(tsc_khz)


def hc_io(value, size=4, read=False, port=0):
    how = {1: 0, 2: 1, 4: 2, 8: 3}[size] | (4 if read else 0) | (port << 3)
    return u8(HC_IO) + u8(how) + u32(value)


def hc_string(gpa, s):
    return u8(HC_STRING) + u32(gpa) + u16(len(s)) + s


def hc_write(gpa, data):
    return u8(HC_WRITE) + u32(gpa) + u8(len(data)) + data


def hc_refs(gpa, rings):
    return u8(HC_REFS) + u32(gpa) + u8(len(rings)) + b"".join(u32(a) + u32(n) for a, n in rings)


def hc_vcpus(n):
    """The script's flags byte for a machine of n vCPUs (1 to 4)."""
    return (n - 1) << 2


def seeds_hypercall():
    ring_bytes = lambda cap: 64 + 32 * cap
    # Events, a handoff into a ring that holds them all, a mark, then the
    # guest records into its ring (head moves on).
    s = u8(0) + u16(256)
    s += u8(HC_EVENTS) + u8(10)
    s += hc_ring(0x10000, 16)
    s += hc_block(0x8000, 1, 0x10000, ring_bytes(16)) + hc_io(0x8000)
    s += hc_string(0x9000, b"phase two") + hc_block(0x8020, 2, 0x9000, 0) + hc_io(0x8020)
    s += hc_write(0x10000 + 24, u64(40))
    write("hypercall", "handoff-mark.bin", s)
    # A ring too small for the early events; a second handoff (refused).
    s = u8(1) + u16(64) + u8(HC_EVENTS) + u8(100)
    s += hc_ring(0x20000, 8) + hc_block(0x8000, 1, 0x20000, ring_bytes(8)) + hc_io(0x8000)
    s += hc_io(0x8000) + hc_write(0x20000 + 24, u64(3))
    write("hypercall", "small-ring-twice.bin", s)
    # The ring in high RAM, at its very end; a mark running off RAM.
    s = u8(0) + u16(16) + u8(HC_EVENTS) + u8(4)
    s += hc_ring(HIGH | (0x10000 - ring_bytes(4)), 4)
    s += hc_block(0x1fffe0, 1, 0x100000000 + 0x10000 - ring_bytes(4), ring_bytes(4)) + hc_io(0x1fffe0)
    s += hc_write(0x1ffff0, b"A" * 16) + hc_block(0x8000, 2, 0x1ffff0, 0) + hc_io(0x8000)
    write("hypercall", "edges.bin", s)
    # Wrong versions, numbers, sizes and directions, misaligned blocks.
    s = u8(2) + u16(8) + u16(5) + u8(HC_EVENTS) + u8(3)
    s += hc_block(0x8000, 1, 0x10000, 0, version=7) + hc_io(0x8000)
    s += hc_block(0x8040, 9, 0, 0) + hc_io(0x8040, size=2) + hc_io(0x8040, size=1, port=3)
    s += hc_io(0x8040, read=True) + hc_io(0x8040, size=8)
    s += hc_ring(0x10003, 2) + hc_block(0x8063, 1, 0x10003, ring_bytes(2)) + hc_io(0x8063)
    s += hc_ring(0x30000, 0xffffffff, damage=0) + hc_block(0x8080, 1, 0x30000, 0xffffffffffffffff)
    s += hc_io(0x8080)
    write("hypercall", "bad-calls.bin", s)
    # After the handoff the guest breaks its ring header, or winds head back.
    for name, tail in (("ring-damaged.bin", hc_ring(0x10000, 16, damage=1)),
                       ("ring-head-back.bin", hc_write(0x10000 + 24, u64(1)))):
        s = u8(0) + u16(64) + u8(HC_EVENTS) + u8(5) + hc_ring(0x10000, 16)
        s += hc_block(0x8000, 1, 0x10000, ring_bytes(16)) + hc_io(0x8000) + tail
        write("hypercall", name, s)
    # ET_HC_HANDOFF_PERCPU on 2 vCPUs: early events on both, a ring each,
    # then each CPU records (its head moves on) and CPU 1 breaks its ring.
    s = u8(hc_vcpus(2)) + u16(256) + u8(HC_EVENTS) + u8(12)
    s += hc_ring(0x10000, 16) + hc_ring(0x20000, 8)
    s += hc_refs(0x7000, [(0x10000, ring_bytes(16)), (0x20000, ring_bytes(8))])
    s += hc_block(0x8000, 3, 0x7000, 2) + hc_io(0x8000)
    s += hc_write(0x10000 + 24, u64(9)) + hc_write(0x20000 + 24, u64(30))
    s += hc_ring(0x20000, 8, damage=4)
    write("hypercall", "percpu-rings.bin", s)
    # What a hostile SMP guest tries: more rings than vCPUs, none, rings
    # that overlap, one outside RAM, a misaligned array, version 2.
    s = u8(hc_vcpus(3)) + u16(64) + u8(HC_EVENTS) + u8(6)
    s += hc_ring(0x10000, 16) + hc_ring(0x10040, 16) + hc_ring(0x30000, 4)
    s += hc_refs(0x7000, [(0x10000, ring_bytes(16)), (0x10040, ring_bytes(16)),
                          (0x30000, ring_bytes(4)), (0x30000, ring_bytes(4))])
    s += hc_block(0x8000, 3, 0x7000, 4) + hc_io(0x8000)
    s += hc_block(0x8000, 3, 0x7000, 0) + hc_io(0x8000)
    s += hc_block(0x8000, 3, 0x7000, 2) + hc_io(0x8000)
    s += hc_refs(0x7100, [(0x10000, ring_bytes(16)), (0x7fffff00, ring_bytes(16))])
    s += hc_block(0x8000, 3, 0x7100, 2) + hc_io(0x8000)
    s += hc_block(0x8000, 3, 0x7004, 1) + hc_io(0x8000)
    s += hc_block(0x8000, 3, 0x7000, 1, version=2) + hc_io(0x8000)
    s += hc_refs(0x7200, [(0x30000, ring_bytes(4)), (0x10000, ring_bytes(16))])
    s += hc_block(0x8000, 3, 0x7200, 2) + hc_io(0x8000)
    write("hypercall", "percpu-hostile.bin", s)


# ---- the trampoline batch (script format: fuzz_tramp_drain) -------------

TD_WRITE, TD_HEADER, TD_RECORD, TD_FILL, TD_DRAIN, TD_RESERVE = range(6)


def td_header(flags, buf=1024, max_events=0, batch=0, region=0x100000, size=0x20000, voff=1,
              sites=(0x180000, 0x180010, 0x180020, 0x180030)):
    s = u8(flags) + u16(buf) + u16(max_events) + u16(batch) + u32(region) + u32(size) + u8(voff)
    s += u8(len(sites))
    for paddr in sites:
        s += u8(0) + u32(paddr)
    return s


def seeds_tramp_drain():
    fill = lambda n: u8(TD_FILL) + u8(n)
    reserve = lambda n: u8(TD_RESERVE) + u8(n)
    drain = u8(TD_DRAIN)
    rec = lambda idx, site, tsc, parent: u8(TD_RECORD) + u16(idx) + u8(site) + u32(tsc) + u64(parent)
    hdr = lambda field, value: u8(TD_HEADER) + u8(field) + u64(value)
    write("tramp_drain", "x86_64-fill-drain.bin",
          td_header(0) + fill(10) + drain + fill(200) + rec(0, 0xf0, 7, 0x1234) + drain + fill(3))
    write("tramp_drain", "i386-oneshot.bin",
          td_header(1 | 2, max_events=5) + fill(8) + drain + fill(2))
    write("tramp_drain", "corrupt-header.bin",
          td_header(0) + fill(4) + hdr(0, 0) + drain + fill(4) + hdr(4, 1 << 40) + drain +
          fill(2) + hdr(2, 0) + drain + fill(3) + hdr(4, (1 << 64) - 8) + drain)
    write("tramp_drain", "overwrite-small-buffer.bin",
          td_header(4, buf=4, batch=100) + fill(50) + drain + fill(50))
    # Record 0 forged before paging, record 1 at an address no site has.
    write("tramp_drain", "stray-ips.bin",
          td_header(0, voff=0) + rec(0, 0xf8, 1, 0) + rec(1, 0xff, 2, 0) + u64(0xdeadbeef) +
          reserve(2) + drain)
    # Interrupted recordings: one reserved and left unwritten across drains,
    # then completed; one holding the last record of a full batch.
    write("tramp_drain", "pending.bin",
          td_header(0, batch=64) + fill(3) + reserve(1) + fill(2) + drain + fill(5) + drain +
          rec(3, 1, 9, 0x1234) + drain + fill(60) + reserve(1) + drain + drain +
          rec(63, 2, 10, 0x1234) + drain + fill(4))
    write("tramp_drain", "i386-pending.bin",
          td_header(1, batch=64) + fill(63) + reserve(1) + drain + rec(63, 0, 3, 0) + drain +
          reserve(20) + drain)


# ---- page walks (format: fuzz_page_walk) --------------------------------

PG, PSE, PAE, LA57, LMA = 1, 2, 4, 8, 16
P_RW = 0x3
PS = 0x80


def page_walk_seed(mode, cr3, va, length, pages):
    """pages: {page number: {entry index: value}} with entry size by mode."""
    esize = 4 if (mode & PG) and not (mode & (PAE | LMA)) else 8
    body = bytearray(4096 * (max(pages) + 1 if pages else 1))
    for page, entries in pages.items():
        for idx, val in entries.items():
            off = page * 4096 + idx * esize
            body[off:off + esize] = val.to_bytes(esize, "little")
    return u8(mode) + u64(cr3) + u64(va) + u16(length) + bytes(body)


def seeds_page_walk():
    write("page_walk", "paging-off.bin", page_walk_seed(0, 0, 0x1234, 64, {0: {0: 0x55}}))
    va = 0x00403123
    write("page_walk", "bits32-4k.bin", page_walk_seed(
        PG, 0x1000, va, 8192, {1: {1: 0x2000 | P_RW}, 2: {3: 0x3000 | P_RW, 4: 0x1000 | P_RW}}))
    write("page_walk", "bits32-pse-4m.bin", page_walk_seed(
        PG | PSE, 0x1000, va, 16, {1: {1: 0x00400000 | PS | P_RW | (0x3 << 13)}}))
    va = 0x40201123  # PDPTE 1, PDE 1, PTE 1
    write("page_walk", "pae-4k.bin", page_walk_seed(
        PG | PAE, 0x1020, va, 5000,
        {1: {4 + 1: 0x2000 | 1}, 2: {1: 0x3000 | P_RW}, 3: {1: 0x4000 | P_RW, 2: 0x4000 | P_RW}}))
    write("page_walk", "pae-2m.bin", page_walk_seed(
        PG | PAE, 0x1000, va, 16, {1: {1: 0x2000 | 1}, 2: {1: 0x200000 | PS | P_RW}}))
    va = 0xffffffff81234567
    i4, i3, i2, i1 = (va >> 39) & 511, (va >> 30) & 511, (va >> 21) & 511, (va >> 12) & 511
    long4 = PG | PAE | LMA
    write("page_walk", "long4-4k.bin", page_walk_seed(
        long4, 0x1000, va, 4200,
        {1: {i4: 0x2000 | P_RW}, 2: {i3: 0x3000 | P_RW}, 3: {i2: 0x4000 | P_RW},
         4: {i1: 0x5000 | P_RW | (1 << 63), i1 + 1: 0x0 | P_RW}}))
    write("page_walk", "long4-1g.bin", page_walk_seed(
        long4, 0x1000, va, 16, {1: {i4: 0x2000 | P_RW}, 2: {i3: 0x40000000 | PS | P_RW}}))
    # Every level points back at the top table: a loop the walk must not follow forever.
    write("page_walk", "long4-loop.bin", page_walk_seed(
        long4, 0x1000, va, 16, {1: {i4: 0x1000 | P_RW, i3: 0x1000 | P_RW, i2: 0x1000 | P_RW,
                                    i1: 0x1000 | P_RW}}))
    write("page_walk", "long4-out-of-ram.bin", page_walk_seed(
        long4, 0x1000, va, 16, {1: {i4: 0x000ffffffffff000 | P_RW}}))
    write("page_walk", "long4-high-ram.bin", page_walk_seed(
        long4, 0x100000000, va, 16, {0: {i4: 0x100001000 | P_RW}}))
    va5 = 0xff00001234567000
    i5 = (va5 >> 48) & 511
    write("page_walk", "long5-2m.bin", page_walk_seed(
        long4 | LA57, 0x1000, va5, 16,
        {1: {i5: 0x2000 | P_RW}, 2: {(va5 >> 39) & 511: 0x3000 | P_RW},
         3: {(va5 >> 30) & 511: 0x4000 | P_RW}, 4: {(va5 >> 21) & 511: 0x600000 | PS | P_RW}}))
    write("page_walk", "non-canonical.bin", page_walk_seed(long4, 0x1000, 0x0000900000000000, 16, {}))


# ---- expectation files (vmm/check/) -------------------------------------

def seeds_expect():
    d = os.path.join(ROOT, "tests", "expect")
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        with open(os.path.join(d, name), "rb") as f:
            write("expect", name, f.read())
    write("expect", "every-kind.expect",
          b"called ct_*\nnot-called panic\nbefore ct_root ct_leaf\ncalls ct_leaf == 31\n"
          b"calls ct_? >= 1\ncalls ct_fib <= 1000000\nreached ct_root within 1 event\n"
          b"reached ct_fib within 2 ms\nreached ct_leaf within 5 us\n"
          b"reached ct_leaf within 1 s\nhandoff\nhandoff ftrace_init\nhandoff guest-ring\n"
          b"no-drops\n# comment\r\ncalled start_kernel # trailing\n")
    write("expect", "bad.expect", b"called\ncalls x == \nreached y within 5 parsecs\n")


# ---- the kernel's ftrace ring buffer (fuzz/targets_ftrace.c) -----------
# Linux 6.1 x86-64 offsets, as fuzz_ftrace_layout() (and the committed BTF
# fixture) give them.

FT_FN, FT_PRINT, FT_BPRINT, FT_GRAPH_RET, FT_GRAPH_ENT, FT_BPUTS = 1, 5, 6, 10, 11, 14


def ft_entry(etype, body, pid=1):
    return u16(etype) + u8(1) + u8(0) + u32(pid) + body


def ft_fn(ip, parent):
    return ft_entry(FT_FN, u64(ip) + u64(parent))


class FtPage:
    """A buffer_data_page written record by record."""

    def __init__(self, stamp):
        self.stamp = stamp
        self.data = b""

    def hdr(self, type_len, delta):
        self.data += u32(type_len | (delta << 5))

    def event(self, delta, payload, big=False):
        payload += b"\0" * (-len(payload) % 4)
        if len(payload) <= 112 and not big:
            self.hdr(len(payload) // 4, delta)
        else:
            self.hdr(0, delta)
            self.data += u32(len(payload) + 4)
        self.data += payload
        return self

    def extend(self, delta):
        self.hdr(30, delta & ((1 << 27) - 1))
        self.data += u32(delta >> 27)
        return self

    def stamp_abs(self, t):
        self.hdr(31, t & ((1 << 27) - 1))
        self.data += u32(t >> 27)
        return self

    def discard(self, delta, n):
        self.hdr(29, delta)
        self.data += u32(n + 4) + b"\xee" * n
        return self

    def pad_to_end(self):
        rest = 4080 - len(self.data)
        if rest >= 8:
            self.hdr(29, 1)
            self.data += u32(rest - 4) + b"\0" * (rest - 8)
        return self

    def bytes(self, commit=None):
        c = len(self.data) if commit is None else commit
        body = (self.data + b"\0" * 4080)[:4080]
        return u64(self.stamp) + u64(c) + body


def ft_page_input(page, mode=1, emit_from=0, bound=0, tail=b""):
    return u8(mode) + u16(emit_from) + u16(bound) + page + tail


def seeds_ftrace_page():
    p = FtPage(1000)
    for i in range(20):
        p.event(i and 17, ft_fn(0xffffffff81000000 + 16 * i, 0xffffffff81000008))
    p.extend(5 << 27).event(0, ft_fn(1, 2)).pad_to_end()
    write("ftrace_page", "functions.bin", ft_page_input(p.bytes()))
    write("ftrace_page", "functions-from.bin", ft_page_input(p.bytes(), emit_from=280))

    # Formats and strings live in the tail, which is guest memory at 0x1000.
    fmt = b"irq %d on cpu%u: %s at %pS\0"
    text = b"constant string\n\0"
    tail = fmt + text + b"%*d|%.3s|%hhx|%lld|%pM|%pe|%c%%\0" + \
        u32(5) + u32(42) + b"abcdef\0" + b"\0" + u8(0x7f) + b"\0\0" + u64(-3) + \
        b"00:11:22:33:44:55\0" + b"\0\0" + u64(-22) + b"Z"
    args = u32(9) + u32(1) + b"timer\0" + b"\0\0" + u64(0xffffffff81000010)
    q = FtPage(50)
    q.event(0, ft_entry(FT_PRINT, u64(0xffffffff81000020) + b"printed text\n\0"))
    q.event(3, ft_entry(FT_BPRINT, u64(0xffffffff81000030) + u64(0x1000) + args))
    q.event(3, ft_entry(FT_BPUTS, u64(0xffffffff81000040) + u64(0x1000 + len(fmt))))
    q.event(3, ft_entry(FT_GRAPH_ENT, u64(0xffffffff81000050) + u32(2)))
    q.event(3, ft_entry(FT_GRAPH_RET, u64(0xffffffff81000050) + u32(2) + u32(0) + u64(53) + u64(62)))
    q.event(3, ft_entry(600, b"\x01" * 40))
    q.event(3, ft_entry(FT_FN, b"\x02" * 4))
    q.event(3, ft_fn(5, 6), big=True)
    write("ftrace_page", "every-type.bin", ft_page_input(q.bytes(), tail=tail))

    r = FtPage((3 << 59) | 9000)
    r.event(0, ft_fn(1, 2)).discard(40, 24).stamp_abs(500).event(2, ft_fn(3, 4))
    r.event(1, ft_entry(700, b"\x03" * 150))
    write("ftrace_page", "stamps-discards.bin", ft_page_input(r.bytes()))
    write("ftrace_page", "missed-flags.bin",
          ft_page_input(r.bytes(len(r.data) | (3 << 30)) , tail=u64(1234)))
    write("ftrace_page", "commit-past-page.bin", ft_page_input(p.bytes(5000)))
    write("ftrace_page", "recycled-bound.bin", ft_page_input(p.bytes(0), mode=2))
    bad = FtPage(1)
    bad.event(0, ft_fn(1, 2)).hdr(29, 1)
    bad.data += u32(0xfffffffc)
    write("ftrace_page", "negative-padding.bin", ft_page_input(bad.bytes()))


def ft_ring(pages, head, tail, reader_page, entries, overrun=0, nr_pages=None,
            read=0, next_override=None, committing=0, mode=2, flags=0):
    """Guest memory from 0x10000: global_trace, a trace_buffer with one CPU,
    its ring_buffer_per_cpu, len(pages) buffer_pages in a ring (RB_PAGE_HEAD
    on the pointer to pages[head]) plus a reader page, and their data pages.
    pages: (stamp, commit, data) per ring page, reader_page likewise."""
    base = 0x10000
    n = len(pages)
    mem = bytearray(0x1000 * (n + 3))
    def put(addr, b):
        mem[addr - base:addr - base + len(b)] = b
    gt, tb, arr, cpu = base, base + 0x100, base + 0x200, base + 0x300
    bpage = [base + 0x600 + 64 * i for i in range(n + 1)]  # the last: reader
    data = [base + 0x1000 * (i + 1) for i in range(n + 1)]
    put(gt + 32, u64(tb))
    put(tb, u32(flags))
    put(tb + 4, u32(1))
    put(tb + 64, u64(arr))
    put(arr, u64(cpu))
    put(cpu + 40, u64(n if nr_pages is None else nr_pages))
    put(cpu + 56, u64(bpage[head]))
    put(cpu + 64, u64(bpage[head]))
    put(cpu + 72, u64(bpage[tail]))
    put(cpu + 80, u64(bpage[tail]))
    put(cpu + 88, u64(bpage[n]))
    put(cpu + 128, u64(entries))
    put(cpu + 136, u64(overrun))
    put(cpu + 160, u64(committing))
    put(cpu + 216, u64(read))
    for i in range(n):
        nxt = bpage[(i + 1) % n] | (1 if (i + 1) % n == head else 0)
        if next_override and i in next_override:
            nxt = next_override[i]
        put(bpage[i], u64(nxt) + u64(bpage[(i - 1) % n]))
    for i, (stamp, commit, body) in enumerate(pages + [reader_page]):
        put(bpage[i] + 48, u64(data[i]))
        put(data[i], u64(stamp) + u64(commit) + body[:4080])
    return u64(base) + u8(mode) + bytes(mem)


def ft_full_page(stamp, count, first=0):
    p = FtPage(stamp)
    for i in range(count):
        p.event(i and 10, ft_fn(0xffffffff81000000 + 16 * (first + i), 0xffffffff81000008))
    if count == 145:
        p.pad_to_end()
    return p


def seeds_ftrace_ring():
    empty = (0, 0, b"")
    def page(stamp, count, first=0):
        p = ft_full_page(stamp, count, first)
        return (stamp, len(p.data), p.data)
    # Two pages used of three; the writer on the second.
    write("ftrace_ring", "two-pages.bin",
          ft_ring([page(1000, 145), page(3000, 40, 145), empty], 0, 1, empty, 185))
    # Wrapped: the head pushed to page 1, the writer back on page 0.
    write("ftrace_ring", "wrapped.bin",
          ft_ring([page(9000, 30, 400), page(3000, 145, 145), page(6000, 145, 290)], 1, 0,
                  empty, 465, overrun=145))
    # After a dump: page 0 recycled (commit 0) before the head, the reader
    # page holds the last data and is the commit page.
    p0 = ft_full_page(1000, 145)
    write("ftrace_ring", "after-dump.bin",
          ft_ring([(1000, 0, p0.data), empty, empty], 1, 1, page(3000, 20, 145), 165,
                  read=165))
    write("ftrace_ring", "committing.bin",
          ft_ring([page(1000, 145), page(3000, 40, 145), empty], 0, 1, empty, 186,
                  committing=1))
    write("ftrace_ring", "loop.bin",
          ft_ring([page(1000, 145), page(3000, 40, 145), empty], 0, 1, empty, 185,
                  next_override={1: 0x10600 + 64}))
    write("ftrace_ring", "huge-nr-pages.bin",
          ft_ring([page(1000, 145), page(3000, 40, 145), empty], 0, 1, empty, 185,
                  nr_pages=1 << 40))
def seeds_ftrace_fill():
    # Rings as tracer_init() leaves them (RB_FL_OVERWRITE, every page empty,
    # old time stamps left), filled with mode's events: some fit, some
    # overflow the ring, some as function_graph; then rings the fill must
    # refuse.
    empty = (0, 0, b"")
    stale = [(5000 + i, 0, b"") for i in range(3)]
    write("ftrace_fill", "fits.bin", ft_ring([empty] * 4, 0, 0, empty, 0, mode=10, flags=1))
    write("ftrace_fill", "overflows.bin", ft_ring(stale, 0, 0, empty, 0, mode=127, flags=1))
    write("ftrace_fill", "graph.bin", ft_ring([empty] * 3, 0, 0, empty, 0, mode=0x80 | 40,
                                              flags=1))
    write("ftrace_fill", "no-overwrite.bin", ft_ring([empty] * 3, 0, 0, empty, 0, mode=5))
    write("ftrace_fill", "not-empty.bin",
          ft_ring([(1000, 28, ft_full_page(1000, 1).data), empty, empty], 0, 0, empty, 1,
                  mode=5, flags=1))
    write("ftrace_fill", "loop.bin", ft_ring([empty] * 3, 0, 0, empty, 0, mode=5, flags=1,
                                             next_override={1: 0x10600 + 64}))


def panic_input(fmt, words=(), word_bytes=8, ram=b""):
    """fuzz_panic_message's layout: mode (count, 0x80 for 4-byte words),
    u16 format length, the words, the format, then guest RAM."""
    mode = len(words) | (0x80 if word_bytes == 4 else 0)
    pack = u32 if word_bytes == 4 else u64
    return u8(mode) + u16(len(fmt)) + b"".join(pack(w) for w in words) + fmt + ram


def seeds_panic_message():
    ram = b"\0" * 0x100 + b"unknown-block(0,0)\0" + b"init\0"
    write("panic_message", "vfs.bin",
          panic_input(b"VFS: Unable to mount root fs on %s", [0x100], ram=ram))
    write("panic_message", "kill-init.bin",
          panic_input(b"Attempted to kill init! exitcode=0x%08x\n", [9]))
    write("panic_message", "sizes.bin",
          panic_input(b"%hhx %hd %ld %lld %zu %c %% %-5d|%05x|%.3s|%*d|%pS",
                      [0x1ff, 0x8000, 2**64 - 3, 2**63, 12, 0x41, 7, 0xab, 0x113, 4, 5, 0x1000],
                      ram=ram))
    write("panic_message", "32-bit.bin",
          panic_input(b"%s %lld %d", [0x113, 5, 1, 2**32 - 2], word_bytes=4, ram=ram))
    write("panic_message", "unterminated.bin",
          panic_input(b"%s|%s", [0x1000 - 4, 0x5000], ram=b"\0" * 0xffc + b"abcd"))


def printk_input(fmt, args=b"", mode=0, max_width=256, out_size=512):
    """fuzz_printk_format's layout: mode (1 printable, 2 kernel rules,
    4 best effort, 8 4-byte longs, 16 symbols, 32 the long missing mark),
    u16 max width, u16 output size, u16 format length, the format, then
    the arguments: integers as their bytes, a string as u8 length and its
    bytes, a pointer as u8 kind (odd: text as for a string) and 8 bytes."""
    return u8(mode) + u16(max_width) + u16(out_size) + u16(len(fmt)) + fmt + args


def printk_str(s):
    return u8(len(s)) + s


def seeds_printk_format():
    bprint, panic = 2 | 16 | 32, 1 | 4 | 16
    ints = u32(7) + u32(42) + u32(-6) + u32(255) + u8(0x41) + u16(0x8000)
    write("printk_format", "kernel-rules.bin",
          printk_input(b"[%*d] [%-*x] [%#o] [%c] [%hd] [%.3d] [%+05d]",
                       ints + u32(8) + u32(5) + u32(9), mode=bprint))
    write("printk_format", "panic-rules.bin",
          printk_input(b"\001code %d %lld %zu %s %.2s %%\n",
                       u32(0xfffffff9) + u64(2**63) + u64(12) + printk_str(b"init\tx") +
                       printk_str(b"abcdef"), mode=panic, max_width=64, out_size=256))
    write("printk_format", "pointers.bin",
          printk_input(b"%pS %ps %pB %pe %px %p %pM %pK",
                       u8(0) + u64(0x1000) + u8(0) + u64(0x1001) + u8(0) + u64(0x1002) +
                       u8(0) + u64(-22) + u8(0) + u64(0x10) + u8(0) + u64(0xff) +
                       u8(1) + printk_str(b"00:11:22:33:44:55"), mode=bprint))
    write("printk_format", "hostile.bin",
          printk_input(b"%999999999d %*d %.*s %n %5% %j %q %l",
                       u32(1) + u32(0x80000000) + u32(2) + u32(-1) + printk_str(b"\0\xff\x7f"),
                       mode=4 | 8, out_size=40))
    write("printk_format", "cut.bin",
          printk_input(b"%s and more %s", printk_str(b"0123456789") + u8(0xff), mode=2,
                       out_size=8))


def seeds_domain_xml():
    """libvirt domain definitions, as `virsh dumpxml` gives them."""
    os_direct = ("<os><type arch='x86_64' machine='pc-q35-7.2'>hvm</type>"
                 "<kernel>/boot/vmlinuz</kernel><initrd>/boot/initrd.img</initrd>"
                 "<cmdline>console=ttyS0 root=/dev/vda1 quiet</cmdline><boot dev='hd'/></os>")
    write("domain_xml", "direct-kernel-boot.xml", (
        "<domain type='kvm'>\n  <name>web1</name>\n"
        "  <uuid>c7a5fdbd-edaf-9455-926a-d65c16db1809</uuid>\n"
        "  <memory unit='KiB'>524288</memory>\n  <currentMemory unit='KiB'>524288</currentMemory>\n"
        "  <vcpu placement='static' current='1'>2</vcpu>\n  " + os_direct + "\n"
        "  <features><acpi/><apic/></features>\n  <cpu mode='host-passthrough'/>\n"
        "  <devices>\n    <emulator>/usr/bin/qemu-system-x86_64</emulator>\n"
        "    <disk type='file' device='disk'><driver name='qemu' type='qcow2'/>"
        "<source file='/var/lib/libvirt/images/web1.qcow2'/><target dev='vda' bus='virtio'/></disk>\n"
        "    <interface type='network'><source network='default'/><model type='virtio'/></interface>\n"
        "    <serial type='pty'><target port='0'/></serial>\n"
        "    <console type='pty'><target type='serial' port='0'/></console>\n"
        "  </devices>\n</domain>\n").encode())
    write("domain_xml", "units.xml", (
        "<domain type='kvm'><name>m</name><memory unit='GiB'>2</memory>"
        "<currentMemory unit='MB'>4096</currentMemory><vcpu>1</vcpu>" + os_direct +
        "</domain>").encode())
    write("domain_xml", "no-kernel.xml",
          b"<domain type='qemu'><name>disk-boot</name><memory>65536</memory>"
          b"<os><type>hvm</type><boot dev='hd'/></os></domain>")
    write("domain_xml", "entities.xml",
          b"<?xml version='1.0'?><!DOCTYPE domain [<!ENTITY k '/boot/vmlinuz'>]>"
          b"<domain type='kvm'><name>&lt;e&gt;</name><memory unit='b'>4194305</memory>"
          b"<os><type>hvm</type><kernel>&k;</kernel><cmdline>a&#10;b</cmdline></os></domain>")
    write("domain_xml", "not-xml.xml", b"<domain type='kvm'><name>x</name><memory>")


def main():
    kernel = seeds_elf()
    seeds_bzimage(kernel)
    seeds_system_map()
    seeds_kallsyms()
    seeds_trace_reader()
    if "--real" in sys.argv:
        seeds_trace_real()
    seeds_hypercall()
    seeds_tramp_drain()
    seeds_page_walk()
    seeds_expect()
    seeds_ftrace_page()
    seeds_ftrace_ring()
    seeds_ftrace_fill()
    seeds_panic_message()
    seeds_printk_format()
    seeds_domain_xml()


if __name__ == "__main__":
    main()
