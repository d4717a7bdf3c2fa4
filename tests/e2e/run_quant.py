#!/usr/bin/env python3
"""An int8 (QDQ) e2e model through `dlcc run -O2`, on the interpreter and on the CPU backend.

    run_quant.py DLCC MODEL_DIR

MODEL_DIR is a tests/e2e/quant_<name> folder (tests/e2e/quantize_models.py: ONNX Runtime's
quantize_static output of an e2e model, its input, ONNX Runtime's outputs and reference.json).  At -O2
the qdq pass runs the quantized products as integers (docs/passes.md, "Quantized products").  Checked:

- against ONNX Runtime's float evaluation of the same QDQ graph (output_ort_float.npy), both backends:
  every output element within one output quantization step, at least 90% of them equal;
- the interpreter against the CPU backend: every element within one step (the float pooling between
  a DQ and a Q may put a value at a tie of two steps differently);
- with `--precision int8` (the 8-bit tensors kept in memory: every product a QLinearConv /
  QLinearMatMul, pooling between a DQ and a Q on the integers), both backends again against ONNX
  Runtime's float evaluation (within one step, 90% equal), and the interpreter and the CPU backend
  bit for bit equal (the firmware test checks the same on Cortex-M4);
- that the qdq pass took every quantized product: `dlcc info --json` at -O2 has as many Round nodes
  as the model had Conv, Gemm and MatMul nodes (each requantization rounds once) and fewer
  QuantizeLinear nodes than the model.

ONNX Runtime's int8 output (output_ort.npy) is compared and printed, not asserted: on the host that
wrote the references (reference.json's cpu_flags: AVX2 without VNNI) its s8s8 kernels add pairs of
products in saturating 16-bit lanes, and its own float evaluation of the graph disagrees with it as
much as dlcc does (docs/performance.md, "int8").  Exit status: 0 pass, 1 fail.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(dlcc, mdir, backend, out, extra=()):
    r = subprocess.run([dlcc, "run", os.path.join(mdir, "model.onnx"), "-O2", "--backend", backend,
                        "-i", "input=" + os.path.join(mdir, "input_0.npy"), "-o", out] + list(extra),
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL dlcc run --backend %s: %s" % (backend, r.stderr.strip()))
        sys.exit(1)
    files = [f for f in os.listdir(out) if f.endswith(".npy")]
    if len(files) != 1:
        print("FAIL dlcc run wrote %s, expected one output" % files)
        sys.exit(1)
    return np.load(os.path.join(out, files[0])).astype(np.float64)


def steps(a, b, step):
    """|a - b| in output steps; float32 outputs put one step within ~1e-5 of 1."""
    return np.abs(a - b) / step


def main():
    dlcc, mdir = sys.argv[1], sys.argv[2]
    with open(os.path.join(mdir, "reference.json")) as f:
        ref = json.load(f)
    step = ref["output_step"]
    ort_float = np.load(os.path.join(mdir, "output_ort_float.npy")).astype(np.float64)
    ort_int8 = np.load(os.path.join(mdir, "output_ort.npy")).astype(np.float64)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        got = {b: run(dlcc, mdir, b, os.path.join(tmp, b)) for b in ("interp", "cpu")}
        got8 = {b + " int8": run(dlcc, mdir, b, os.path.join(tmp, b + "8"), ["--precision", "int8"])
                for b in ("interp", "cpu")}
    for b, y in list(got.items()) + list(got8.items()):
        if y.shape != ort_float.shape:
            print("FAIL %s: shape %s, expected %s" % (b, y.shape, ort_float.shape))
            return 1
        d = steps(y, ort_float, step)
        equal = float(np.mean(d < 0.01))
        print("%s vs ONNX Runtime float: max %.2f steps, %.0f%% equal" % (b, d.max(), equal * 100))
        if d.max() > 1.01 or equal < 0.9:
            print("FAIL %s: beyond one step of ONNX Runtime's float evaluation, or under 90%% equal" % b)
            ok = False
        e = steps(y, ort_int8, step)
        print("%s vs ONNX Runtime int8 (%s, %s; not asserted): max %.2f steps, %.0f%% within one step"
              % (b, ref["onnxruntime"], ref["cpu_flags"], e.max(), float(np.mean(e <= 1.01)) * 100))
    r = subprocess.run([dlcc, "info", os.path.join(mdir, "model.onnx"), "--json"], capture_output=True, text=True)
    info = json.loads(r.stdout)
    before, after = info["ops_before"], info["ops_after"]
    products = sum(before.get(k, 0) for k in ("Conv", "Gemm", "MatMul"))
    print("products %d, Round nodes after -O2 %d, QuantizeLinear %d -> %d"
          % (products, after.get("Round", 0), before.get("QuantizeLinear", 0), after.get("QuantizeLinear", 0)))
    if after.get("Round", 0) < products or after.get("QuantizeLinear", 0) >= before.get("QuantizeLinear", 0):
        print("FAIL: the qdq pass left quantized products in float")
        ok = False
    d = steps(got["interp"], got["cpu"], step)
    print("interp vs cpu: max %.2f steps" % d.max())
    if d.max() > 1.01:
        print("FAIL: the interpreter and the CPU backend differ by more than one step")
        ok = False
    if not np.array_equal(got8["interp int8"], got8["cpu int8"]):
        print("FAIL: with --precision int8 the interpreter and the CPU backend differ: max %.2f steps"
              % steps(got8["interp int8"], got8["cpu int8"], step).max())
        ok = False
    else:
        print("interp vs cpu with --precision int8: bit for bit equal")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
