#!/usr/bin/env python3
"""FPGA target by C simulation: compiles one model with `dlcc -t fpga`, checks
the generated files against the synthesizability rules (lint_hls.py), builds
NAME.c + NAME_tb.c with the C compiler in strict C99 (float32), or NAME.cpp +
NAME_tb.cpp with the C++ compiler and Xilinx's ap_types headers (fixed point),
runs the testbench, then links NAME.c / NAME.cpp with a C driver that uses only
the header's NAME_run on the model's committed input_K.npy and compares with
output_K.npy.

    run_fpga.py DLCC CC MODEL_DIR [--fixed --cxx CXX --ap-types DIR] [--classify] [-- DLCC_OPTIONS...]

Fixed point without --ap-types (the hls4ml wheel that ships the headers was
not installed) is skipped, with exit status 77.

float32: rtol 1e-3, atol 1e-4 (docs/architecture.md, "Tests").
--fixed: compiled with tests/fpga/precision.json (fixed<16,6> activations,
fixed<8,1> weights); every output within 0.1 * max|ref| + 2^-7 of the float
reference, and with --classify the arg-max class of every row unchanged (unless
the reference's best two classes are within that bound of each other: a tie).
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
from run_compiled import run_driver  # noqa: E402
from run_e2e import compare  # noqa: E402
from lint_hls import lint  # noqa: E402

STRICT = ["-std=c99", "-Wall", "-Werror", "-Wno-unknown-pragmas"]
# C++ for the ap_fixed designs; the ap_types headers are system headers (their
# own warnings are not ours), and GCC's uninitialized-value warnings fire inside
# their inlined code.
STRICT_CXX = ["-std=c++14", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-Wno-uninitialized",
              "-Wno-maybe-uninitialized"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlcc")
    ap.add_argument("cc")
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--classify", action="store_true")
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--ap-types", default="")
    ap.add_argument("options", nargs="*")
    a = ap.parse_intermixed_args()
    if a.fixed and not (a.ap_types and (Path(a.ap_types) / "ap_fixed.h").exists()):
        print("SKIP: fixed-point designs need Xilinx's ap_types headers (the hls4ml wheel scripts/venv.sh "
              "installs); none given")
        return 77
    with tempfile.TemporaryDirectory(prefix="dlcc-fpga-") as tmp:
        tmp = Path(tmp)
        cmd = [a.dlcc, str(a.model_dir / "model.json"), "-t", "fpga", "-o", str(tmp), "--name", "m"]
        if a.fixed:
            cmd += ["--precision-file", str(HERE / "precision.json")]
        cmd += a.options
        print("$ " + " ".join(cmd))
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            print("FAIL: dlcc exited with status %d\n%s" % (p.returncode, p.stderr))
            return 1
        again = tmp / "again"
        p = subprocess.run(cmd[:5] + [str(again)] + cmd[6:], capture_output=True, text=True)
        if p.returncode:
            print("FAIL: the second dlcc run exited with status %d\n%s" % (p.returncode, p.stderr))
            return 1
        for f in sorted(again.iterdir()):
            if f.read_bytes() != (tmp / f.name).read_bytes():
                print("FAIL: %s differs between two identical runs" % f.name)
                return 1
            f.unlink()
        again.rmdir()
        print("ok   two runs wrote identical files")
        # C++ in fixed point, and in float32 when layers are connected by hls::stream FIFOs
        cpp = (tmp / "m.cpp").exists()
        x = "cpp" if cpp else "c"
        if cpp and not (a.ap_types and (Path(a.ap_types) / "hls_stream.h").exists()):
            print("SKIP: the design uses hls::stream, whose C-simulation header (hls_stream.h) ships with "
                  "Xilinx's ap_types headers; none given")
            return 77
        names = sorted(f.name for f in tmp.iterdir())
        want = sorted(["m." + x, "m.h", "m.report.json", "m.tcl", "m_tb." + x])
        if names != want:
            print("FAIL: files %s, expected %s" % (names, want))
            return 1
        problems = lint(tmp, "m")
        for msg in problems:
            print("FAIL lint: " + msg)
        if problems:
            return 1
        print("ok   lint: synthesizability rules hold in every generated file")
        report = json.loads((tmp / "m.report.json").read_text())
        print("     report: %d DSP, %d LUT, %d BRAM18K, latency %d cycles, dataflow %s" % (
            report["dsp"], report["lut"], report["bram_18k"], report["latency_cycles"], report["dataflow"]))
        # the testbench: dlcc's own test vector, interpreter reference
        flags = STRICT_CXX + ["-isystem", a.ap_types] if cpp else STRICT
        design = [str(tmp / ("m." + x))]
        if cpp:           # the design as a C++ object once, for the testbench and the C driver
            p = subprocess.run([a.cxx] + flags + ["-O1", "-I", str(tmp), "-c", design[0], "-o", str(tmp / "m.o")],
                               capture_output=True, text=True)
            if p.returncode:
                print("FAIL: m.cpp did not build\n%s" % p.stderr)
                return 1
            design = [str(tmp / "m.o")]
        build = [a.cxx if cpp else a.cc] + flags + ["-O1", "-I", str(tmp)] + design + [
            str(tmp / ("m_tb." + x)), "-lm", "-o", str(tmp / "tb")]
        p = subprocess.run(build, capture_output=True, text=True)
        if p.returncode:
            print("FAIL: the testbench did not build\n%s" % p.stderr)
            return 1
        p = subprocess.run([str(tmp / "tb")], capture_output=True, text=True, timeout=300)
        print(p.stdout.rstrip())
        if p.returncode:
            print("FAIL: the testbench exited with status %d" % p.returncode)
            return 1
        # a stream read while empty, or left holding values, means unbalanced reads and writes
        if "Hls::stream" in p.stdout or "ERROR: stream" in p.stdout:
            print("FAIL: unbalanced stream reads and writes in C simulation")
            return 1
        if "hls::stream" in (tmp / ("m." + x)).read_text():
            print("ok   every stream was read exactly as often as it was written")
        # the host wrapper through the header, on the committed PyTorch test vector
        if cpp:           # the C driver linked with the design's C++ object
            results = run_driver(a.cc, tmp, a.model_dir, design, [], ["-lstdc++"])
        else:
            results = run_driver(a.cc, tmp, a.model_dir, [str(tmp / "m.c")], ["-Wno-unknown-pragmas"])
        if results is None:
            return 1
        ok = True
        for name, got, ref in results:
            if not a.fixed:
                ok &= compare(name, got, ref, 1e-3, 1e-4)
                continue
            bound = 0.1 * float(np.abs(ref).max()) + 2.0 ** -7
            ok &= compare(name, got, ref, 0.0, bound)
            if a.classify:
                g, r = got.reshape(got.shape[0], -1), ref.reshape(ref.shape[0], -1)
                # a row whose best two reference classes are closer than the bound is a tie
                top2 = np.sort(r, axis=1)[:, -2:]
                tie = (top2[:, 1] - top2[:, 0]) <= bound
                same = bool(((g.argmax(axis=1) == r.argmax(axis=1)) | tie).all())
                print("%s %s: arg-max class %s, expected %s" % ("ok  " if same else "FAIL", name,
                                                                g.argmax(axis=1).tolist(), r.argmax(axis=1).tolist()))
                ok &= same
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
