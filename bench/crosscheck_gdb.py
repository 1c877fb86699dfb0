# SPDX-License-Identifier: MIT
# gdb helper for bench/crosscheck-gdb.sh: records the first N calls a guest
# makes to the kernel's function-entry sites through QEMU's gdbstub,
# independently of earlytrace's own capture.
#
#   gdb -batch -nx -x bench/crosscheck_gdb.py   with, in the environment,
#     XC_SITES  file of "vaddr paddr" lines (hex), one per site
#     XC_N      how many calls to record
#     XC_OUT    output file: one "ip parent_ip" line (hex) per call
#     XC_PORT   the gdbstub's TCP port (default 1234)
#     XC_METHOD fentry: one hardware breakpoint on __fentry__ (XC_FENTRY,
#               hex) instead of a breakpoint per site (see the end)
#
# Every site gets a breakpoint at its virtual address and one at its
# physical address (code that runs before the kernel's own page tables, at
# physical addresses, would hit that one); a hit at a physical address is
# recorded under the site's virtual address, as earlytrace records it.
# QEMU's gdbstub implements Z0 breakpoints itself, by comparing the guest's
# pc with its list as it executes, so nothing is written into guest memory
# and a breakpoint at an unmapped virtual address is fine before paging.
#
# The breakpoints are sent as raw Z0 packets (RemoteTargetConnection.
# send_packet), not made with gdb.Breakpoint: gdb rebuilds its whole
# breakpoint-location table for every breakpoint created, which for ~74,000
# took longer than 4 minutes. gdb does not know about them, so at each stop
# this script steps over the site itself: remove (z0), stepi, re-insert.
# At a site the function has not touched its stack: the return address,
# the parent ip, is the 8 bytes at $rsp.
import os
import struct
import sys
import time

import gdb


def log(msg):
    sys.stderr.write("crosscheck_gdb: %s\n" % msg)
    sys.stderr.flush()


def main():
    n = int(os.environ["XC_N"])
    out_path = os.environ["XC_OUT"]
    port = os.environ.get("XC_PORT", "1234")
    phys_to_virt = {}
    virt = []
    with open(os.environ["XC_SITES"]) as f:
        for line in f:
            v, p = line.split()
            v, p = int(v, 16), int(p, 16)
            virt.append(v)
            if p != v:
                phys_to_virt[p] = v

    gdb.execute("set pagination off")
    gdb.execute("set confirm off")
    gdb.execute("set width 0")
    gdb.execute("set architecture i386:x86-64")
    gdb.execute("target remote :%s" % port)
    # Otherwise gdb removes and re-inserts every breakpoint at every stop.
    gdb.execute("set breakpoint always-inserted on")

    if os.environ.get("XC_METHOD") == "fentry":
        return record_fentry_calls(n, out_path, set(virt))

    conn = gdb.selected_inferior().connection
    if not hasattr(conn, "send_packet"):
        raise RuntimeError("this gdb cannot send raw packets (needs gdb 12 or later)")

    def packet(p):
        r = conn.send_packet(p)
        if isinstance(r, str):
            r = r.encode()
        if r != b"OK":
            raise RuntimeError("gdbstub answered %r to %s" % (r, p))

    t0 = time.monotonic()
    armed = set(virt) | set(phys_to_virt)
    for a in armed:
        packet("Z0,%x,1" % a)
    log("%d breakpoints set (%d virtual, %d physical) in %.1f s"
        % (len(virt) + len(phys_to_virt), len(virt), len(phys_to_virt),
           time.monotonic() - t0))

    inf = gdb.selected_inferior()
    t0 = time.monotonic()
    with open(out_path, "w") as out:
        for i in range(n):
            try:
                gdb.execute("continue", to_string=True)
            except gdb.error as e:
                log("guest stopped after %d calls: %s" % (i, e))
                break
            if not inf.threads():
                log("QEMU went away (its time limit?) after %d calls" % i)
                break
            frame = gdb.selected_frame()
            pc = int(frame.read_register("pc")) & 0xFFFFFFFFFFFFFFFF
            sp = int(frame.read_register("rsp")) & 0xFFFFFFFFFFFFFFFF
            try:
                parent = struct.unpack("<Q", bytes(inf.read_memory(sp, 8)))[0]
            except gdb.MemoryError:
                parent = 0
            if pc not in armed:
                log("guest stopped at 0x%x, not a site, after %d calls" % (pc, i))
                break
            # Step over the site with its breakpoint out of the way.
            packet("z0,%x,1" % pc)
            gdb.execute("stepi", to_string=True)
            packet("Z0,%x,1" % pc)
            pc = phys_to_virt.get(pc, pc)
            out.write("0x%x 0x%x\n" % (pc, parent))
            if (i + 1) % int(os.environ.get("XC_EVERY", "500")) == 0:
                out.flush()
                log("%d calls in %.1f s" % (i + 1, time.monotonic() - t0))
    log("recorded in %.1f s" % (time.monotonic() - t0))
    if inf.threads():
        gdb.execute("kill")


def record_fentry_calls(n, out_path, sites):
    """QEMU+KVM: one hardware breakpoint on __fentry__, which every site
    calls until the kernel's ftrace_init makes them nops. At its first
    instruction [rsp] is the site's return address (site + 5) and [rsp+8]
    the traced function's parent. Calls from sites earlytrace does not
    select (rejected ones) are skipped, as earlytrace never sees them."""
    fentry = int(os.environ["XC_FENTRY"], 16)
    gdb.execute("hbreak *0x%x" % fentry, to_string=True)
    inf = gdb.selected_inferior()
    t0 = time.monotonic()
    got = 0
    with open(out_path, "w") as out:
        while got < n:
            try:
                gdb.execute("continue", to_string=True)
            except gdb.error as e:
                log("guest stopped after %d calls: %s" % (got, e))
                break
            if not inf.threads():
                log("QEMU went away after %d calls" % got)
                break
            sp = int(gdb.selected_frame().read_register("rsp")) & 0xFFFFFFFFFFFFFFFF
            ret, parent = struct.unpack("<QQ", bytes(inf.read_memory(sp, 16)))
            if ret - 5 not in sites:
                continue
            out.write("0x%x 0x%x\n" % (ret - 5, parent))
            got += 1
    log("recorded %d calls in %.1f s" % (got, time.monotonic() - t0))
    if inf.threads():
        gdb.execute("kill")


try:
    main()
except Exception as e:  # a clear message and a non-zero status from gdb -batch
    log("error: %s" % e)
    gdb.execute("quit 1")
