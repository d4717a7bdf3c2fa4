#!/usr/bin/env python3
"""An int8 (QDQ) e2e model compiled for AArch64 with `--precision int8`, run under QEMU's user mode,
against the interpreter bit for bit.

    run_quant_aarch64.py DLCC MODEL_DIR

MODEL_DIR is a tests/e2e/quant_<name> folder (run_quant.py).  The model is compiled three times with
`--triple aarch64-linux-gnu -O2 --precision int8`, once per CPU:

- cortex-a53 (Armv8.0: no dot product instruction): the integer products as plain loops;
- neoverse-n1 (DotProd): the register blocks of 8-bit dot products on SDOT, signed bytes on both
  sides (the unsigned activation bytes shifted by 128 and the shift's products taken off again,
  codegen/expr.c);
- neoverse-v1 (DotProd and I8MM): the same blocks on USDOT, unsigned by signed bytes.

Checked: each object's assembly uses the instruction its CPU has (sdot and no usdot on the N1, usdot
on the V1, neither on the A53); the object linked statically with the C driver of run_compiled.py
by aarch64-linux-gnu-gcc and run by `qemu-aarch64 -cpu max` gives outputs bit for bit equal to
`dlcc run -O2 --precision int8 --backend interp`.  QEMU emulates the instructions; the run says
nothing about speed.  Exit status: 0 pass, 1 fail, 77 skipped (no qemu-aarch64 or
aarch64-linux-gnu-gcc: scripts/install-deps.sh installs qemu-user and gcc-aarch64-linux-gnu).
"""
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from run_compiled import driver_source

CC = "aarch64-linux-gnu-gcc"
QEMU = "qemu-aarch64"
CPUS = [("cortex-a53", ()), ("neoverse-n1", ("sdot",)), ("neoverse-v1", ("usdot",))]


def reference(dlcc, mdir, tmp):
    out = tmp / "ref"
    r = subprocess.run([dlcc, "run", str(mdir / "model.onnx"), "-O2", "--precision", "int8", "--backend",
                        "interp", "-i", "input=" + str(mdir / "input_0.npy"), "-o", str(out)],
                       capture_output=True, text=True)
    files = sorted(out.glob("*.npy")) if r.returncode == 0 else []
    if len(files) != 1:
        print("FAIL dlcc run --backend interp: %s" % r.stderr.strip())
        return None
    return np.load(files[0])


def run_driver(d, cpu, mdir, dtypes):
    """Links d/m.o (dlcc's object, header d/m.h) with run_compiled.py's C driver by aarch64-linux-gnu-gcc
    and runs it under QEMU on mdir/input_K.npy; the outputs as flat arrays of `dtypes`, or None (printed
    why)."""
    source, ins, outs = driver_source((d / "m.h").read_text())
    if len(outs) != len(dtypes):
        print("FAIL %s: the header has %d outputs, expected %d" % (cpu, len(outs), len(dtypes)))
        return None
    (d / "driver.c").write_text(source)
    r = subprocess.run([CC, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror", "-O1", "-static", "-I", str(d),
                        str(d / "driver.c"), str(d / "m.o"), "-lm", "-o", str(d / "driver")],
                       capture_output=True, text=True)
    if r.returncode:
        print("FAIL %s: the driver did not link\n%s" % (cpu, r.stderr))
        return None
    args = [str(mdir / ("input_%d.npy" % i)) for i in range(len(ins))] + [str(d / ("out_%d.bin" % k))
                                                                       for k in range(len(outs))]
    r = subprocess.run([QEMU, "-cpu", "max", str(d / "driver")] + args, capture_output=True, text=True, timeout=600)
    if r.returncode:
        print("FAIL %s: the driver exited with status %d under QEMU\n%s" % (cpu, r.returncode, r.stderr))
        return None
    return [np.fromfile(d / ("out_%d.bin" % k), dtype=t) for k, t in enumerate(dtypes)]


def check_cpu(dlcc, mdir, tmp, cpu, wants, ref):
    d = tmp / cpu
    d.mkdir()
    cmd = [dlcc, str(mdir / "model.onnx"), "-O2", "--triple", "aarch64-linux-gnu", "--mcpu", cpu,
           "--precision", "int8", "--emit", "obj,asm,header", "--name", "m", "-o", str(d)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print("FAIL %s: dlcc exited with status %d\n%s" % (cpu, r.returncode, r.stderr))
        return False
    asm = (d / "m.s").read_text()
    ok = True
    for insn in ("sdot", "usdot"):
        n = len(re.findall(r"^\s*%s\s" % insn, asm, re.M))
        if (insn in wants) != (n > 0):
            print("FAIL %s: %d %s instructions in the assembly, expected %s" % (cpu, n, insn,
                                                                               "some" if insn in wants else "none"))
            ok = False
        elif n:
            print("%s: %d %s instructions" % (cpu, n, insn))
    outs = run_driver(d, cpu, mdir, [ref.dtype])
    if outs is None:
        return False
    got = outs[0]
    if got.size != ref.size or not np.array_equal(got.view(np.uint32), ref.reshape(-1).view(np.uint32)):
        bad = int(np.sum(got != ref.reshape(-1))) if got.size == ref.size else -1
        print("FAIL %s: %s elements differ from the interpreter's" % (cpu, bad if bad >= 0 else "the sizes"))
        return False
    print("%s: %d elements bit for bit equal to the interpreter's" % (cpu, got.size))
    return ok


def arguments(doc):
    """(DLCC, MODEL_DIR) from the command line, or the exit status: 1 (usage), 77 (no cross compiler or
    QEMU: skipped)."""
    if len(sys.argv) != 3:
        print(doc)
        return 1
    if not shutil.which(CC) or not shutil.which(QEMU):
        print("SKIP: %s or %s not found" % (CC, QEMU))
        return 77
    return sys.argv[1], Path(sys.argv[2])


def main():
    a = arguments(__doc__)
    if isinstance(a, int):
        return a
    dlcc, mdir = a
    with tempfile.TemporaryDirectory(prefix="dlcc-a64-") as tmp:
        tmp = Path(tmp)
        ref = reference(dlcc, mdir, tmp)
        if ref is None:
            return 1
        ok = True
        for cpu, wants in CPUS:
            ok &= check_cpu(dlcc, mdir, tmp, cpu, wants, ref)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
