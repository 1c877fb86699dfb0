# SPDX-License-Identifier: MIT
# gdb -batch -x script (bench/performance.py runs it): the baseline a user
# has today. A hardware breakpoint on __fentry__ (every traced call goes
# through it until the kernel's ftrace_init), and at each hit what a tracer
# needs: the traced function (the return address at rsp, minus the call)
# and its parent (the next word). Prints "HITS n SECONDS s" after WINDOW
# seconds. The caller sets WINDOW and FENTRY (__fentry__'s address: a
# distribution's vmlinux has no symbols) with `py NAME=...`.
import struct
import time

import gdb

window = globals().get("WINDOW", 60)
gdb.execute("hbreak *0x%x" % FENTRY, to_string=True)
inf = gdb.selected_inferior()
hits = 0
t0 = time.monotonic()
while time.monotonic() - t0 < window:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if not inf.threads():
        break
    frame = gdb.selected_frame()
    if frame.pc() != FENTRY:
        # Not our breakpoint: the guest stopped for another reason (on
        # kvm-pvm, an int3 of the kernel's own ends QEMU's guest).
        print("STOPPED at 0x%x" % frame.pc())
        break
    sp = int(frame.read_register("rsp")) & 0xFFFFFFFFFFFFFFFF
    try:
        site, parent = struct.unpack("<QQ", bytes(inf.read_memory(sp, 16)))
    except gdb.MemoryError:
        pass
    hits += 1
print("HITS %d SECONDS %.3f" % (hits, time.monotonic() - t0))
