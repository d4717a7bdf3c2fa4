#!/usr/bin/env python3
"""FPGA target by C simulation: compiles one model with `dlcc -t fpga`, checks
the generated files against the synthesizability rules (lint_hls.py), builds
NAME.c + NAME_tb.c with the C compiler in strict C99, runs the testbench,
then links NAME.c with a driver that uses only the header's NAME_run on the
model's committed input_K.npy and compares with output_K.npy.

    run_fpga.py DLCC CC MODEL_DIR [--fixed] [--classify] [-- DLCC_OPTIONS...]

float32: rtol 1e-3, atol 1e-4 (DESIGN.md section 6, e2e).
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
from run_compiled import DRIVER, fields  # noqa: E402
from run_e2e import compare  # noqa: E402
from lint_hls import lint  # noqa: E402

STRICT = ["-std=c99", "-Wall", "-Werror", "-Wno-unknown-pragmas"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlcc")
    ap.add_argument("cc")
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--classify", action="store_true")
    ap.add_argument("options", nargs="*")
    a = ap.parse_args()
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
        names = sorted(f.name for f in tmp.iterdir())
        want = ["m.c", "m.h", "m.report.json", "m.tcl", "m_tb.c"]
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
        build = [a.cc] + STRICT + ["-O1", "-I", str(tmp), str(tmp / "m.c"), str(tmp / "m_tb.c"), "-lm", "-o",
                                   str(tmp / "tb")]
        p = subprocess.run(build, capture_output=True, text=True)
        if p.returncode:
            print("FAIL: the testbench did not build\n%s" % p.stderr)
            return 1
        p = subprocess.run([str(tmp / "tb")], capture_output=True, text=True, timeout=300)
        print(p.stdout.rstrip())
        if p.returncode:
            print("FAIL: the testbench exited with status %d" % p.returncode)
            return 1
        # the host wrapper through the header, on the committed PyTorch test vector
        header = (tmp / "m.h").read_text()
        ins, outs = fields(header, "inputs"), fields(header, "outputs")
        load = "\n".join("    in.%s = read_npy(argv[%d], %s);" % (n, i + 1, b) for i, (n, b) in enumerate(ins))
        store = "\n".join(
            "    { FILE *f = fopen(argv[%d], \"wb\"); if (!f || fwrite(out.%s, 1, %s, f) != %s) return 6; fclose(f); }"
            % (len(ins) + k + 1, n, b, b) for k, (n, b) in enumerate(outs))
        alloc = "\n".join("    out.%s = malloc(%s ? %s : 1);" % (n, b, b) for n, b in outs)
        (tmp / "driver.c").write_text(DRIVER.replace("@LOAD@", load + "\n" + alloc).replace("@STORE@", store))
        build = [a.cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-O1",
                 "-I", str(tmp), str(tmp / "driver.c"), str(tmp / "m.c"), "-lm", "-o", str(tmp / "driver")]
        p = subprocess.run(build, capture_output=True, text=True)
        if p.returncode:
            print("FAIL: the driver did not build\n%s" % p.stderr)
            return 1
        refs = [np.load(a.model_dir / ("output_%d.npy" % k)) for k in range(len(outs))]
        args = [str(a.model_dir / ("input_%d.npy" % i)) for i in range(len(ins))]
        args += [str(tmp / ("out_%d.bin" % k)) for k in range(len(outs))]
        p = subprocess.run([str(tmp / "driver")] + args, capture_output=True, text=True, timeout=300)
        if p.returncode:
            print("FAIL: the driver exited with status %d\n%s" % (p.returncode, p.stderr))
            return 1
        ok = True
        for k, (name, _) in enumerate(outs):
            got = np.fromfile(tmp / ("out_%d.bin" % k), dtype=refs[k].dtype).reshape(refs[k].shape)
            if not a.fixed:
                ok &= compare(name, got, refs[k], 1e-3, 1e-4)
                continue
            bound = 0.1 * float(np.abs(refs[k]).max()) + 2.0 ** -7
            ok &= compare(name, got, refs[k], 0.0, bound)
            if a.classify:
                g, r = got.reshape(got.shape[0], -1), refs[k].reshape(refs[k].shape[0], -1)
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
