#!/usr/bin/python3
"""Graph optimization on raw PyTorch exports (issue "Graph optimization", run by hand: needs
Debian's python3-torch and python3-torchvision, which CI does not install).

    bench/graph_opt.py DLCC [--out DIR] [NAME ...]      (names: resnet18 mobilenet_v2 dscnn_kws)

Each model (bench/models.py: seeded weights, non-trivial batch-norm statistics, seeded input) is
exported at opset 13 with training=TrainingMode.PRESERVE and do_constant_folding=False, so the
ONNX file keeps BatchNormalization, Identity and the shape arithmetic. Then, per model:

- `dlcc info -O0/-O2 --json`: which of BatchNormalization, Identity, Shape, Gather, ConstantOfShape,
  Dropout remain at -O2 (none may), whether every Relu / Clip (ReLU6) is in the kernel of the Conv
  that produces its input, node and kernel counts, workspace at -O0 and -O2 and its lower bound;
- `dlcc run --backend cpu -O2` (the compiled kernels) against `dlcc run -O0` (the reference
  interpreter on the unoptimized graph) and against PyTorch: max |difference|, and whether it is
  within rtol 1e-4 (+ atol 1e-5).

Prints one line per model and exits 1 if any check fails.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import models as bm  # noqa: E402

GONE = ("BatchNormalization", "Identity", "Shape", "Gather", "ConstantOfShape", "Dropout")
ACTS = ("Relu", "Clip")


def export_raw(name, d):
    model, xs = bm.make(name)
    xts = [torch.from_numpy(x) for x in xs]
    with torch.no_grad():
        y = model(*xts).numpy().astype(np.float32)
    buf = bm.to_onnx(model, xts, [i.name for i in bm.MODELS[name].inputs], do_constant_folding=False,
                     training=torch.onnx.TrainingMode.PRESERVE)
    d.mkdir(parents=True, exist_ok=True)
    (d / "model.onnx").write_bytes(buf.getvalue())
    for k, x in enumerate(xs):
        np.save(d / ("input_%d.npy" % k), x)
    return y


def info(dlcc, model, level):
    p = subprocess.run([dlcc, "info", str(model), "-O%d" % level, "--json"], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit("dlcc info failed: " + p.stderr)
    return json.loads(p.stdout)


def run(dlcc, d, extra):
    with tempfile.TemporaryDirectory() as tmp:
        ins = []
        for k, i in enumerate(bm.MODELS[d.name].inputs):
            ins += ["-i", "%s=%s" % (i.name, d / ("input_%d.npy" % k))]
        p = subprocess.run([dlcc, "run", str(d / "model.onnx")] + ins + ["-o", tmp] + extra,
                           capture_output=True, text=True)
        if p.returncode:
            raise SystemExit("dlcc run %s failed: %s" % (" ".join(extra), p.stderr))
        return np.load(Path(tmp) / "output.npy")


def check(dlcc, name, out):
    d = out / name
    y_torch = export_raw(name, d)
    o0, o2 = info(dlcc, d / "model.onnx", 0), info(dlcc, d / "model.onnx", 2)
    left = {op: n for op, n in o2["ops_after"].items() if op in GONE and n}
    unfused = 0                  # activations in a kernel not headed by a Conv (or the classifier's Gemm)
    for k in o2["kernels"]:
        if any(op in ACTS for op in k["ops"]) and k["ops"][0] not in ("Conv", "Gemm", "MatMul"):
            unfused += 1
    acts = sum(n for op, n in o2["ops_after"].items() if op in ACTS)
    y2 = run(dlcc, d, ["--backend", "cpu", "-O2"])
    y0 = run(dlcc, d, ["-O0"])
    err0 = float(np.max(np.abs(y2 - y0)))
    errt = float(np.max(np.abs(y2 - y_torch)))
    ok_num = np.allclose(y2, y0, rtol=1e-4, atol=1e-5) and np.allclose(y2, y_torch, rtol=1e-4, atol=1e-5)
    ok = not left and unfused == 0 and ok_num
    print("%-14s %s  -O0 %d nodes %d kernels, -O2 %d nodes %d kernels; left of %s: %s; %d Relu/Clip, "
          "%d not in a Conv's kernel; workspace -O0 %d, -O2 %d (lower bound %d); "
          "max|-O2 cpu - -O0 interp| %.3g, max|-O2 cpu - torch| %.3g" % (
              name, "ok  " if ok else "FAIL", o0["nodes_after"], o0["kernels_after"], o2["nodes_after"],
              o2["kernels_after"], "/".join(GONE), left or "none", acts, unfused, o0["workspace_bytes"],
              o2["workspace_bytes"], o2["workspace_lower_bound"], err0, errt), flush=True)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlcc")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "build" / "graph_opt")
    ap.add_argument("names", nargs="*", default=["resnet18", "mobilenet_v2", "dscnn_kws"])
    a = ap.parse_args()
    ok = all([check(a.dlcc, n, a.out) for n in a.names])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
