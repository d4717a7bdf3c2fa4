#!/usr/bin/env python3
"""A model in ONNX Runtime's QOperator format against the same model in the QDQ format.

    run_qop.py DLCC MODEL_DIR

MODEL_DIR is a tests/e2e/quant_qop_<name> folder (tests/e2e/quantize_models.py --qoperator): model.onnx
in the QOperator format (QLinearConv and ONNX Runtime's com.microsoft QLinearAdd, QLinearAveragePool,
QLinearGlobalAveragePool, QGemm), model_qdq.onnx in the QDQ format from the same calibration,
input_0.npy, ONNX Runtime's output of model.onnx and reference.json.  Checked, with `dlcc run -O2` on
the interpreter and the CPU backend, with and without --precision int8:

- every element within one output quantization step of ONNX Runtime's output of model.onnx (dlcc
  reads each contrib operator as the QDQ form it computes);
- with --precision int8, the interpreter and the CPU backend bit for bit equal.
model_qdq.onnx's output is printed beside (not asserted: ONNX Runtime gives an average pool's output
its input's scale in the QDQ format but not in the QOperator one, so the two files can differ by a
step; where their parameters agree, ResNet's, dlcc's outputs are equal bit for bit).

Exit status: 0 pass, 1 fail.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(dlcc, model, mdir, out, extra):
    r = subprocess.run([dlcc, "run", model, "-O2", "-i", "input=" + os.path.join(mdir, "input_0.npy"), "-o", out]
                       + extra, capture_output=True, text=True)
    if r.returncode:
        print("FAIL dlcc run %s %s: %s" % (os.path.basename(model), " ".join(extra), r.stderr.strip()))
        sys.exit(1)
    return np.load(os.path.join(out, [f for f in os.listdir(out) if f.endswith(".npy")][0]))


def main():
    dlcc, mdir = sys.argv[1], sys.argv[2]
    step = json.load(open(os.path.join(mdir, "reference.json")))["output_step"]
    ort = np.load(os.path.join(mdir, "output_ort.npy")).astype(np.float64)
    ok = True
    got = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, extra in enumerate(([], ["--backend", "cpu"], ["--precision", "int8"],
                                   ["--precision", "int8", "--backend", "cpu"])):
            a = run(dlcc, os.path.join(mdir, "model.onnx"), mdir, os.path.join(tmp, "a%d" % k), extra)
            b = run(dlcc, os.path.join(mdir, "model_qdq.onnx"), mdir, os.path.join(tmp, "b%d" % k), extra)
            got[k] = a
            d = np.abs(a.astype(np.float64) - ort).max() / step
            e = np.abs(a.astype(np.float64) - b).max() / step
            print("%s %s: %.2f steps from ONNX Runtime's output; the QDQ file's output %.2f steps away"
                  % (os.path.basename(mdir), " ".join(extra) or "(interpreter)", d, e))
            if d > 1.01:
                print("FAIL: beyond one step of ONNX Runtime's output")
                ok = False
    if not np.array_equal(got[2].view(np.uint32), got[3].view(np.uint32)):
        print("FAIL: with --precision int8 the interpreter and the CPU backend differ")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
