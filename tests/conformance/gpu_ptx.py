#!/usr/bin/env python3
"""Every conformance case through `dlcc -t gpu` and ptxas: the PTX of each
model dlcc supports must assemble.

    gpu_ptx.py DLCC ROOT... [--node-dir DIR] [--arch sm_75] [-j N] [-v]

A case is a folder holding model.onnx.  dlcc refusing a model with a
diagnostic (an operator or dtype not supported yet) counts as unsupported; a
code-generation or internal error, a crash, a timeout, or ptxas rejecting the
PTX is a failure.  Exit 77 (skipped) when
ptxas or every ROOT is absent.
"""

import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PTXAS = os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas")
FAILURE_MARKS = ("internal error", "code generation for", "LLVM")


def one(dlcc, arch, case):
    try:
        return run_case(dlcc, arch, case)
    except subprocess.TimeoutExpired:
        return "fail", case.name, "timed out"


def run_case(dlcc, arch, case):
    with tempfile.TemporaryDirectory(prefix="dlcc-ptx-") as tmp:
        p = subprocess.run([dlcc, str(case / "model.onnx"), "-t", "gpu", "--gpu-arch", arch, "--emit", "ptx",
                            "-o", tmp, "--name", "m"], capture_output=True, text=True, timeout=600)
        if p.returncode not in (0, 1):   # 1 = a diagnostic; anything else (a signal, a usage error) fails
            return "fail", case.name, "dlcc exited with status %d: %s" % (p.returncode, p.stderr.strip()[-300:])
        if p.returncode:
            msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "status %d" % p.returncode
            return ("fail" if any(m in msg for m in FAILURE_MARKS) else "unsupported"), case.name, msg
        p = subprocess.run([PTXAS, "-arch=" + arch, os.path.join(tmp, "m.ptx"), "-o", os.devnull],
                           capture_output=True, text=True, timeout=600)
        if p.returncode:
            return "fail", case.name, "ptxas: " + p.stderr.strip()[:300]
        return "pass", case.name, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlcc")
    ap.add_argument("roots", nargs="*", type=Path)
    ap.add_argument("--node-dir", type=Path, action="append", default=[])
    ap.add_argument("--arch", default="sm_75")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 4)
    ap.add_argument("-v", action="store_true", help="also list the unsupported cases with dlcc's message")
    a = ap.parse_args()
    if not Path(PTXAS).exists():
        print("SKIP: ptxas not found at %s (set PTXAS)" % PTXAS)
        return 77
    cases = sorted({m.parent for r in a.roots + a.node_dir if r.is_dir() for m in r.glob("*/model.onnx")})
    if not cases:
        print("SKIP: no cases under %s" % " ".join(map(str, a.roots + a.node_dir)))
        return 77
    with ThreadPoolExecutor(a.j) as ex:
        results = list(ex.map(lambda c: one(a.dlcc, a.arch, c), cases))
    count = {"pass": 0, "fail": 0, "unsupported": 0}
    for kind, name, msg in results:
        count[kind] += 1
        if kind == "fail" or (a.v and kind == "unsupported"):
            print("%s %s: %s" % (kind.upper(), name, msg))
    print("gpu ptx (%s): %d assembled, %d failed, %d unsupported" % (a.arch, count["pass"], count["fail"],
                                                                   count["unsupported"]))
    return 1 if count["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
