#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Facts the benchmarks and the gdb cross-check need about a guest, in one
# place (bench/performance.py imports it; the shell scripts run it):
#
#   guest_facts.py cpu-params          the Linux parameters earlytrace's
#                                      CPU model adds on this host
#   guest_facts.py fentry VMLINUX      __fentry__'s address, in hex
import os
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ET = os.path.join(ROOT, "build", "earlytrace")


def cpu_model_params():
    """What `earlytrace run --cpu help` says the model auto picks adds for
    Linux guests ("" when it adds nothing), so another VMM's guest can be
    given the same CPU features."""
    out = subprocess.run([ET, "run", "--cpu", "help"], capture_output=True, text=True).stdout
    auto = False
    for line in out.splitlines():
        if "auto picks it on this host" in line:
            auto = True
            continue
        if line and not line.startswith(" "):
            auto = False
        if auto and "adds '" in line:
            return line.split("adds '", 1)[1].split("'", 1)[0]
    return ""


def fentry_address(vmlinux):
    """Where the kernel's call sites go: the target of the first site's
    call rel32. Distribution kernels are stripped, so gdb cannot look
    __fentry__ up by name."""
    out = subprocess.run([ET, "sites", "--kernel", vmlinux], capture_output=True, text=True).stdout
    site = None
    for line in out.splitlines():
        f = line.split()
        if line.startswith("#"):
            break
        if len(f) >= 4 and f[3] == "call":
            site = int(f[1], 16)
            break
    if site is None:
        raise SystemExit("guest_facts: no call site in %s" % vmlinux)
    with open(vmlinux, "rb") as f:
        d = f.read()
    phoff = struct.unpack_from("<Q", d, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", d, 54)
    for i in range(phnum):
        typ, _, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
        if typ == 1 and vaddr <= site < vaddr + filesz:
            o = off + site - vaddr
            if d[o] != 0xE8:
                raise SystemExit("guest_facts: site 0x%x is not a call" % site)
            return (site + 5 + struct.unpack_from("<i", d, o + 1)[0]) & 0xFFFFFFFFFFFFFFFF
    raise SystemExit("guest_facts: site 0x%x is outside %s's segments" % (site, vmlinux))


if __name__ == "__main__":
    if sys.argv[1:] == ["cpu-params"]:
        print(cpu_model_params())
    elif len(sys.argv) == 3 and sys.argv[1] == "fentry":
        print("%x" % fentry_address(sys.argv[2]))
    else:
        raise SystemExit("usage: guest_facts.py cpu-params | fentry VMLINUX")
