#!/usr/bin/env python3
"""`dlcc run` over ONNX's node test cases, as a user would run them: every graph
input given with -i NAME=FILE.npy as the case stores it (no input bound by the
caller), the outputs compared with the case's (rtol 1e-3, atol 1e-5 for floats,
equal for integers and bools; NaN matches NaN).  docs/cli.md, "dlcc run".

    run_node_cases.py DLCC NODE_DIR [--min-pass FRACTION] [--report FILE] [-j N] [--filter S]
                      [--bind-ints] [--backend interp|cpu|gpu-emulate]

Counts the cases whose graph inputs are all float32, int32, int64
or bool (test_data_set_0 only).  Exit status 1 when the passing fraction is
below --min-pass (default 0: report only), or when a case crashed; 77
(skipped) when NODE_DIR does not exist.  --bind-ints gives the integer inputs
with --bind NAME=FILE.npy instead (frozen, as for compiling) and first
compiles each case for the CPU with those bindings (`dlcc MODEL --bind ...`),
which must succeed.  Needs onnx and numpy (the test venv, scripts/venv.sh)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

PLAIN = {onnx.TensorProto.FLOAT, onnx.TensorProto.INT32, onnx.TensorProto.INT64, onnx.TensorProto.BOOL}


def file_name(tensor_name):
    """docs/cli.md: characters outside [A-Za-z0-9._-] and a leading '.' become '_'."""
    s = re.sub(r"[^A-Za-z0-9._-]", "_", tensor_name)
    return ("_" + s[1:] if s.startswith(".") else s) + ".npy"


def elem_type(vi):
    t = vi.type
    return t.tensor_type.elem_type if t.HasField("tensor_type") else None


def plain_case(model):
    g = model.graph
    inits = {i.name for i in g.initializer}
    ins = [vi for vi in g.input if vi.name not in inits]
    return ins, all(elem_type(v) in PLAIN for v in ins)


def close(got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return "shape/dtype %s %s, expected %s %s" % (got.dtype, list(got.shape), want.dtype, list(want.shape))
    if want.dtype.kind == "f":
        bad = ~(np.isclose(got, want, rtol=1e-3, atol=1e-5) | (np.isnan(got) & np.isnan(want)))
        return "%d of %d elements differ" % (bad.sum(), bad.size) if bad.any() else None
    return None if np.array_equal(got, want) else "values differ"


def run_case(dlcc, case, bind_ints=False, backend="interp"):
    model = onnx.load(str(case / "model.onnx"), load_external_data=False)
    ins, plain = plain_case(model)
    if not plain:
        return None
    data = case / "test_data_set_0"
    with tempfile.TemporaryDirectory() as tmp:
        args = [dlcc, "run", str(case / "model.onnx"), "-o", os.path.join(tmp, "out"), "--backend", backend]
        binds = []
        for k, vi in enumerate(ins):
            pb = data / ("input_%d.pb" % k)
            if not pb.exists():
                break               # an optional input the case leaves out
            t = onnx.TensorProto()
            t.ParseFromString(pb.read_bytes())
            path = os.path.join(tmp, "in_%d.npy" % k)
            np.save(path, numpy_helper.to_array(t))
            if bind_ints and elem_type(vi) in (onnx.TensorProto.INT64, onnx.TensorProto.INT32):
                binds += ["--bind", "%s=%s" % (vi.name, path)]
            else:
                args += ["-i", "%s=%s" % (vi.name, path)]
        args += binds
        if binds:
            p = subprocess.run([dlcc, str(case / "model.onnx"), "-o", os.path.join(tmp, "obj")] + binds,
                               capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
                return ("crash" if p.returncode not in (1, 2) else "refused"), "compiling: " + msg
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return "fail", "timed out"
        if p.returncode != 0:
            msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
            return ("crash" if p.returncode not in (1, 2) else "refused"), msg
        for k, vo in enumerate(model.graph.output):
            t = onnx.TensorProto()
            t.ParseFromString((data / ("output_%d.pb" % k)).read_bytes())
            want = numpy_helper.to_array(t)
            got = np.load(os.path.join(tmp, "out", file_name(vo.name)))
            why = close(got, want)
            if why:
                return "fail", "output %s: %s" % (vo.name, why)
    return "pass", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlcc")
    ap.add_argument("node_dir")
    ap.add_argument("--min-pass", type=float, default=0.0)
    ap.add_argument("--report")
    ap.add_argument("--filter", default="")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--bind-ints", action="store_true")
    ap.add_argument("--backend", default="interp", choices=["interp", "cpu", "gpu-emulate"])
    a = ap.parse_args()
    if not Path(a.node_dir).is_dir():
        print("skip: %s does not exist" % a.node_dir)
        return 77
    cases = sorted(p for p in Path(a.node_dir).iterdir() if (p / "model.onnx").exists() and a.filter in p.name)
    with ThreadPoolExecutor(a.j) as ex:
        results = list(ex.map(lambda c: (c.name, run_case(a.dlcc, c, a.bind_ints, a.backend)), cases))
    results = [(n, r) for n, r in results if r is not None]
    counts = {}
    for _, (st, _) in results:
        counts[st] = counts.get(st, 0) + 1
    n = len(results)
    passed = counts.get("pass", 0)
    lines = ["%s %s %s" % (st.upper(), name, why) for name, (st, why) in results if st != "pass"]
    summary = "dlcc run over %d node cases: %d pass (%.1f%%), %s" % (
        n, passed, 100.0 * passed / max(n, 1),
        ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()) if k != "pass") or "no other")
    if a.report:
        Path(a.report).write_text("\n".join(lines + [summary]) + "\n")
    else:
        print("\n".join(lines))
    print(summary)
    crashed = counts.get("crash", 0)
    if crashed:
        print("error: %d cases crashed" % crashed)
    return 1 if passed < a.min_pass * n or crashed else 0


if __name__ == "__main__":
    sys.exit(main())
