#!/usr/bin/env python3
"""Writes the int8 e2e models: tests/e2e/quant_<name>/ (run by hand; the folders are committed).

    tests/e2e/quantize_models.py DLCC_ONNX_DIR

DLCC_ONNX_DIR holds <name>.onnx and <name>_in.npy for the e2e models cnn, dscnn, resnet and mlp, as
tests/e2e/export_models.py's build(name) gives them (Debian's Python with python3-torch):

    /usr/bin/python3 -c "import sys, onnx, numpy; sys.path.insert(0, 'tests/e2e'); import export_models as e
    for n in ['cnn', 'dscnn', 'resnet', 'mlp']:
        m, x, y = e.build(n)[:3]; onnx.save(m, f'DIR/{n}.onnx'); numpy.save(f'DIR/{n}_in.npy', x[0])"

and dscnn_kws.onnx / dscnn_kws_in.npy, the MLPerf Tiny keyword-spotting DS-CNN of bench/models.py
(`/usr/bin/python3 bench/models.py --out D dscnn_kws`: D/dscnn_kws/model.onnx and input_0.npy), whose
float model is also kept as quant_dscnn_kws/float.onnx for the firmware test's size comparison.

    tests/e2e/quantize_models.py DLCC_ONNX_DIR --qoperator

writes quant_qop_dscnn and quant_qop_resnet instead (the QOperator format beside the QDQ one; the
float models may come from `dlcc convert tests/e2e/NAME/model.json -o DIR/NAME.onnx`).

Each model goes through ONNX Runtime's quant_pre_process and quantize_static as issue 30 asks (QDQ
format, per-channel int8 weights, int8 activations, min-max calibration on 32 standard-normal inputs,
seed 0), in an environment with onnx, onnxruntime, ml_dtypes and sympy from PyPI (bench/.venv after
bench/quant.py has run once).  Written per model: model.onnx (the QDQ model), input_0.npy (the e2e
input), output_ort.npy (ONNX Runtime's int8 output, all graph optimizations, one thread) and
output_ort_float.npy (ONNX Runtime with graph optimizations off: the QDQ graph evaluated in float), and
reference.json (the output's quantization step, the versions, and the CPU flags that decide ONNX
Runtime's int8 kernels: avx2, avx512_vnni, avx_vnni, amx_int8).  tests/e2e/run_quant.py checks dlcc
against them.
"""
import json
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

HERE = os.path.dirname(os.path.abspath(__file__))


class Samples(CalibrationDataReader):
    """n standard-normal samples of input `inp` (seed 0)."""

    def __init__(self, inp, shape, n):
        self.inp, self.shape, self.n, self.k = inp, shape, n, 0
        self.rng = np.random.default_rng(0)

    def get_next(self):
        if self.k >= self.n:
            return None
        self.k += 1
        return {self.inp: self.rng.standard_normal(self.shape).astype(np.float32)}


def prepare(src_dir, name, prefix):
    """The output folder <prefix><name>, the float model, its e2e input and input name, and the model
    through quant_pre_process (pre.onnx in the folder, removed by the caller)."""
    out = os.path.join(HERE, prefix + name)
    os.makedirs(out, exist_ok=True)
    src = os.path.join(src_dir, name + ".onnx")
    x = np.load(os.path.join(src_dir, name + "_in.npy"))
    inp = onnx.load(src).graph.input[0].name
    pre = os.path.join(out, "pre.onnx")
    quant_pre_process(src, pre)
    return out, src, x, inp, pre


def reference(out, qm, inp, x, extra):
    """output_ort.npy (ONNX Runtime's output of qm, one thread) and reference.json (the step of the
    output's last DequantizeLinear, ONNX Runtime's version, and extra)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    np.save(os.path.join(out, "output_ort.npy"),
            ort.InferenceSession(qm, so, providers=["CPUExecutionProvider"]).run(None, {inp: x})[0])
    m = onnx.load(qm)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in m.graph.initializer}
    dq = [n for n in m.graph.node if n.output[0] == m.graph.output[0].name][0]
    assert dq.op_type == "DequantizeLinear"
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump(dict({"output_step": float(inits[dq.input[1]]), "onnxruntime": ort.__version__}, **extra), f,
                  indent=1)
        f.write("\n")


def main():
    src_dir = sys.argv[1]
    flags = open("/proc/cpuinfo").read().split("flags")[1].split("\n")[0].split()
    isa = " ".join(f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8") if f in flags)
    for name in ("cnn", "dscnn", "resnet", "mlp", "dscnn_kws"):
        out, src, x, inp, pre = prepare(src_dir, name, "quant_")
        qm = os.path.join(out, "model.onnx")
        quantize_static(pre, qm, Samples(inp, x.shape, 32), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
        os.remove(pre)
        np.save(os.path.join(out, "input_0.npy"), x)
        if name == "dscnn_kws":   # the float model beside it: the firmware test compares the sizes
            onnx.save(onnx.load(src), os.path.join(out, "float.onnx"))
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        np.save(os.path.join(out, "output_ort_float.npy"),
                ort.InferenceSession(qm, so, providers=["CPUExecutionProvider"]).run(None, {inp: x})[0])
        reference(out, qm, inp, x, {"onnx": onnx.__version__, "cpu_flags": isa})
        print(name, "->", out)


def qoperator(src_dir):
    """quant_qop_<name>/ for dscnn and resnet: the QOperator format (QLinearConv and ONNX Runtime's
    com.microsoft QLinearAdd / QLinearAveragePool / QLinearGlobalAveragePool / QGemm) as model.onnx and
    the QDQ format of the same calibration as model_qdq.onnx (16 standard-normal samples, seed 0), the
    e2e input, ONNX Runtime's output of model.onnx (output_ort.npy) and reference.json (its output step).
    tests/e2e/run_qop.py checks that dlcc reads both formats to the same bits."""
    for name in ("dscnn", "resnet"):
        out, src, x, inp, pre = prepare(src_dir, name, "quant_qop_")
        for fmt, file in ((QuantFormat.QOperator, "model.onnx"), (QuantFormat.QDQ, "model_qdq.onnx")):
            quantize_static(pre, os.path.join(out, file), Samples(inp, x.shape, 16), quant_format=fmt,
                            per_channel=True,
                            activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
        os.remove(pre)
        np.save(os.path.join(out, "input_0.npy"), x)
        reference(out, os.path.join(out, "model.onnx"), inp, x, {})
        print(name, "->", out)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--qoperator":
        qoperator(sys.argv[1])
    else:
        main()
