#!/usr/bin/env python3
"""Every ONNX backend test model through `dlcc -t fpga` and C simulation:
the emitter must produce strict C99 (or, for a design whose layers pass
hls::stream FIFOs, C++14 with the ap_types headers' hls_stream.h) that builds
and whose testbench passes (float32) for every model the FPGA target accepts;
a stream left holding values, or read while empty, fails.  A model dlcc refuses
with a one-line diagnostic (an operator not lowered yet, a dynamic shape)
counts as unsupported; anything else that goes wrong fails the test.  Skips (exit 77) without the data.

    sweep_cases.py DLCC CC [--cxx CXX] [--ap-types DIR] DATA_DIR...
"""

import subprocess
import sys
import tempfile
from pathlib import Path


def main():
    dlcc, cc, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    cxx, ap_types = "c++", ""
    while args and args[0] in ("--cxx", "--ap-types"):
        if args[0] == "--cxx":
            cxx = args[1]
        else:
            ap_types = args[1]
        args = args[2:]
    roots = [Path(p) for p in args]
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
            if (out / "m.cpp").exists():     # streams: C++ with hls_stream.h
                if not (ap_types and (Path(ap_types) / "hls_stream.h").exists()):
                    unsupported.append((d.name, "hls::stream design, and no ap_types headers given"))
                    continue
                build = [cxx, "-std=c++14", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-isystem", ap_types,
                         "-I", str(out), str(out / "m.cpp"), str(out / "m_tb.cpp")]
            else:
                build = [cc, "-std=c99", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-I", str(out),
                         str(out / "m.c"), str(out / "m_tb.c")]
            p = subprocess.run(build + ["-lm", "-o", str(out / "tb")], capture_output=True, text=True)
            if p.returncode:
                failed.append((d.name, "C compiler: " + p.stderr[:400]))
                continue
            p = subprocess.run([str(out / "tb")], capture_output=True, text=True, timeout=120)
            if p.returncode:
                failed.append((d.name, "testbench: " + p.stdout[-400:]))
                continue
            if "Hls::stream" in p.stdout or "ERROR: stream" in p.stdout:
                failed.append((d.name, "unbalanced stream reads and writes: " + p.stdout[-400:]))
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
