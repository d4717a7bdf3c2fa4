#!/usr/bin/env python3
"""A stream of inputs pipelined over two devices against the same plan run one
input at a time (docs/targets/hetero.md, "Measurements").  Run by hand, not a test:

    bench/hetero_stream.py [--build BUILD] [--model DIR] [--inputs N] [--devices FILE] [--native]

The model (default: ResNet-8 at 32x32 from bench/models.py, exported into
bench/build/models/resnet8 when missing) is compiled with `dlcc -t hetero
--devices cpu-a,gpu-b --objective throughput --emulate` on the device file
(default bench/hetero_two.json: a CPU core, and the emulated GPU on the other
core with the speed it was measured at, so that the plan balances the two),
linked with tests/hetero/driver.c and BUILD's runtime library, and run in the
driver's bench mode: N inputs (default 64) through m_run_ptrs one at a time,
then the same N through m_submit / m_wait with m_IN_FLIGHT in flight; the
best of 3 of each.  The outputs are checked against the reference
interpreter.  Exit status 0 when the pipelined stream finished first.  What
it shows and does not: both "devices" are CPU code on StarPU CPU workers (the
emulated GPU partition is the GPU schedule run serially), so the gain is the
overlap of successive inputs' partitions on two workers, not any GPU's speed.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", type=Path, default=ROOT / "build")
    ap.add_argument("--model", type=Path, default=HERE / "build" / "models" / "resnet8")
    ap.add_argument("--inputs", type=int, default=64)
    ap.add_argument("--devices", type=Path, default=HERE / "hetero_two.json")
    ap.add_argument("--cc", default="cc")
    a = ap.parse_args()
    if not (a.model / "model.onnx").exists() and not (a.model / "model.json").exists():
        subprocess.run(["/usr/bin/python3", str(HERE / "models.py"), "--out", str(a.model.parent), a.model.name],
                       check=True)
    link = ["--link=%s" % (a.build / "runtime" / "libdlcc_runtime.a"), "--link=-lstarpu-1.3", "--link=-ldl",
            "--link=-lpthread"]
    cmd = [sys.executable, str(ROOT / "tests" / "hetero" / "run_hetero.py"), "--mode", "bench", "--inputs",
           str(a.inputs), "--timeout", "600"] + link + [str(a.build / "tools" / "dlcc"), a.cc, str(a.model), "--",
                                                         "--devices", "cpu-a,gpu-b", "--device-file", str(a.devices),
                                                         "--objective", "throughput", "--emulate"]
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    print(p.stdout, end="", flush=True)
    m = re.search(r"one at a time ([0-9.]+) ms, pipelined \(m_IN_FLIGHT (\d+)\) ([0-9.]+) ms", p.stdout)
    if p.returncode or not m:
        print("hetero_stream: the run failed")
        return 1
    seq, pipe = float(m.group(1)), float(m.group(3))
    print("hetero_stream: %d inputs pipelined over two devices %s than one at a time (%.1f ms against %.1f ms, "
          "%.2fx)" % (a.inputs, "faster" if pipe < seq else "NOT faster", pipe, seq, seq / pipe))
    return 0 if pipe < seq else 1


if __name__ == "__main__":
    sys.exit(main())
