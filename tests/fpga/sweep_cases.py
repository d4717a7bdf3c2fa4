#!/usr/bin/env python3
"""Every ONNX backend test model through `dlcc -t fpga` and C simulation:
the emitter must produce strict C99 that builds and whose testbench passes
(float32) for every model the FPGA target accepts.  A model dlcc refuses
with a one-line diagnostic (an operator not lowered yet, a dynamic shape)
counts as unsupported; anything else that goes wrong fails the test.  Skips (exit 77) without the data.

    sweep_cases.py DLCC CC DATA_DIR...
"""

import subprocess
import sys
import tempfile
from pathlib import Path


def main():
    dlcc, cc, roots = sys.argv[1], sys.argv[2], [Path(p) for p in sys.argv[3:]]
    cases = sorted(d for r in roots if r.is_dir() for d in r.iterdir() if (d / "model.onnx").is_file())
    if not cases:
        print("skip: no ONNX backend test data in %s" % ", ".join(map(str, roots)))
        return 77
    passed, unsupported, failed = 0, [], []
    with tempfile.TemporaryDirectory(prefix="dlcc-fpga-sweep-") as tmp:
        for d in cases:
            out = Path(tmp) / d.name
            p = subprocess.run([dlcc, str(d / "model.onnx"), "-t", "fpga", "-o", str(out), "--name", "m"],
                               capture_output=True, text=True, timeout=120)
            if p.returncode:
                # a one-line diagnostic (exit 1) is dlcc refusing the model: unsupported; anything else fails
                ok_refusal = p.returncode == 1 and p.stderr.startswith("dlcc: ") and p.stderr.count("\n") == 1
                (unsupported if ok_refusal else failed).append((d.name, p.stderr.strip()))
                continue
            p = subprocess.run([cc, "-std=c99", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-I", str(out),
                                str(out / "m.c"), str(out / "m_tb.c"), "-lm", "-o", str(out / "tb")],
                               capture_output=True, text=True)
            if p.returncode:
                failed.append((d.name, "C compiler: " + p.stderr[:400]))
                continue
            p = subprocess.run([str(out / "tb")], capture_output=True, text=True, timeout=120)
            if p.returncode:
                failed.append((d.name, "testbench: " + p.stdout[-400:]))
                continue
            passed += 1
    for name, why in unsupported:
        print("unsupported %s: %s" % (name, why.splitlines()[-1] if why else ""))
    for name, why in failed:
        print("FAIL %s: %s" % (name, why))
    print("%d cases: %d pass, %d unsupported, %d fail" % (len(cases), passed, len(unsupported), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
