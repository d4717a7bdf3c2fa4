#!/usr/bin/env python3
"""An e2e model compiled for AArch64 (float32), run under QEMU's user mode, against PyTorch's outputs.

    run_aarch64.py DLCC MODEL_DIR

MODEL_DIR is a tests/e2e model folder (model.json, input_K.npy, output_K.npy).  The model is compiled
with `--triple aarch64-linux-gnu -O2` for `generic` (Armv8.0 NEON) and for neoverse-n1, linked
statically with run_compiled.py's C driver by aarch64-linux-gnu-gcc and run by `qemu-aarch64 -cpu
max`; each output is compared with PyTorch's (rtol 1e-3, atol 1e-4, as run_compiled.py).  NEON masks
no vector accesses, so where a model has guarded loads (cnn, resnet, raider: padded windows) this runs
their run-time test for a vector inside its buffer (codegen/vector.c) on float32 data.  QEMU says
nothing about speed.  Exit status: 0 pass, 1 fail, 77
skipped (no qemu-aarch64 or aarch64-linux-gnu-gcc).
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from run_e2e import compare
from run_quant_aarch64 import arguments, run_driver


def main():
    a = arguments(__doc__)
    if isinstance(a, int):
        return a
    dlcc, mdir = a
    refs = []
    while (mdir / ("output_%d.npy" % len(refs))).exists():
        refs.append(np.load(mdir / ("output_%d.npy" % len(refs))))
    ok = True
    with tempfile.TemporaryDirectory(prefix="dlcc-a64-") as tmp:
        for cpu in ("generic", "neoverse-n1"):
            d = Path(tmp) / cpu
            d.mkdir()
            r = subprocess.run([dlcc, str(mdir / "model.json"), "-O2", "--triple", "aarch64-linux-gnu", "--mcpu", cpu,
                                "--name", "m", "-o", str(d)], capture_output=True, text=True)
            if r.returncode:
                print("FAIL %s: dlcc exited with status %d\n%s" % (cpu, r.returncode, r.stderr))
                ok = False
                continue
            outs = run_driver(d, cpu, mdir, [ref.dtype for ref in refs])
            if outs is None:
                ok = False
                continue
            for k, (got, ref) in enumerate(zip(outs, refs)):
                print("%s:" % cpu, end=" ")
                ok &= compare("output_%d" % k, got.reshape(ref.shape) if got.size == ref.size else got, ref, 1e-3, 1e-4)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
