#!/usr/bin/env python3
"""Agreement of dlcc with ONNX Runtime on int8 models made by ONNX Runtime's own quantizer.

    bench/quant.py [--dlcc PATH] [--calib N] [--reduce-range] [--time] [NAME ...]

For each bench model (bench/build/models/NAME, written by bench/run.sh or bench/models.py), as issue
30 asks: `quant_pre_process`, then `quantize_static` in the QDQ format, per-channel int8 weights and
int8 activations, calibrated (min-max) on N inputs (default 16) drawn like the model's saved input
(standard normal for float inputs; integer inputs reused as saved).  Then, on the saved inputs:

- ONNX Runtime, all graph optimizations (its QDQ fusions: QLinearConv, QGemm, QLinearAdd ...): the
  int8 reference;
- ONNX Runtime with graph optimizations off: the same QDQ graph evaluated in float, DQ → op → Q;
- `dlcc run --backend cpu -O2` (the compiled CPU code, integer QLinearConv / QLinearMatMul after the
  qdq pass, docs/passes.md).

A quantization step is the scale of the DequantizeLinear that produces the model's output (the
output's last quantization); the report gives the share of output elements within one step of ONNX
Runtime's int8 output and the largest difference in steps, for dlcc and, as the scale of what to
expect, for ONNX Runtime's float evaluation of the same graph against its own int8 one, and dlcc
against that float evaluation.

With --time, the int8 model and the float one are also compiled (`-O2 --mcpu native`) and timed at
one thread against ONNX Runtime on the same files, RUNS (default 20) calls a side, the sides
alternating in 3 rounds: the second table gives the medians and dlcc's int8 time as a ratio of ONNX
Runtime's int8 time and of dlcc's own float time.

Runs in bench/.venv (bench/peers.py makes it), adding onnx, ml_dtypes and sympy, which the
quantizer needs, on first use (sympy 1.13 or later: the venv sees Debian's older one, whose
conversion of NumPy 2 scalars fails in quant_pre_process's symbolic shape inference -- U-Net's
Resize scales).  Never run in CI (the quantizer and ONNX Runtime come from PyPI).
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv")


def ensure_env():
    try:
        import onnxruntime.quantization  # noqa: F401
        import onnx.reference  # noqa: F401
        import sympy
        if tuple(int(v) for v in sympy.__version__.split(".")[:2]) >= (1, 13):
            return
    except ImportError:
        pass
    if os.environ.get("DLCC_QUANT_REEXEC"):
        sys.exit("bench/quant.py: the quantizer's packages (onnx >= 1.16, sympy >= 1.13) are missing from bench/.venv")
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        sys.exit("bench/quant.py: run bench/peers.py once first (it makes bench/.venv)")
    # the venv sees Debian's onnx (too old for the quantizer): a newer one inside it
    subprocess.run([py, "-m", "pip", "install", "-q", "onnx>=1.16", "ml_dtypes", "sympy>=1.13"], check=True)
    os.environ["DLCC_QUANT_REEXEC"] = "1"
    os.execv(py, [py] + sys.argv)


def output_step(model):
    """The scale of the DequantizeLinear that produces output 0, or None."""
    from onnx import numpy_helper
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    prod = {o: n for n in model.graph.node for o in n.output}
    n = prod.get(model.graph.output[0].name)
    while n is not None:
        if n.op_type == "DequantizeLinear":
            s = inits.get(n.input[1])
            return float(s.reshape(-1)[0]) if s is not None and s.size == 1 else None
        n = prod.get(n.input[0])
    return None


def agreement(ref, got, step):
    import numpy as np
    d = np.abs(ref.astype(np.float64) - got.astype(np.float64)) / step
    return float(np.mean(d <= 1.01) * 100), float(d.max())  # the outputs are float32: a step is 1 within ~1e-5


def main():
    ensure_env()
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    ap = argparse.ArgumentParser()
    ap.add_argument("--dlcc", default=os.path.join(HERE, "..", "build", "tools", "dlcc"))
    ap.add_argument("--calib", type=int, default=16)
    ap.add_argument("--reduce-range", action="store_true",
                    help="7-bit weights (quantize_static's reduce_range), which ONNX Runtime advises on x86 "
                         "without VNNI: its u8s8 kernels there add pairs of products in saturating 16-bit lanes")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--precision", choices=["default", "int8"], default="default",
                    help="int8: dlcc compiles and runs the quantized models with --precision int8 (the 8-bit "
                         "tensors kept in memory, every product a QLinearConv / QLinearMatMul)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    models = os.path.join(HERE, "build", "models")
    names = a.names or sorted(n for n in os.listdir(models) if not n.endswith("-nofold"))
    work = os.path.join(HERE, "build", "quant-rr" if a.reduce_range else "quant")
    if a.precision == "int8":
        work += "-int8"
    os.makedirs(work, exist_ok=True)
    timings = []
    print("| model | dlcc: within 1 step | max steps | ORT float: within 1 step | max steps "
          "| dlcc vs ORT float: within 1 step | max steps |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for name in names:
        src = os.path.join(models, name, "model.onnx")
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        m = onnx.load(src)
        init_names = {i.name for i in m.graph.initializer}
        ins = [i for i in m.graph.input if i.name not in init_names]
        saved = [np.load(os.path.join(models, name, f"input_{k}.npy")) for k in range(len(ins))]
        rng = np.random.default_rng(0)

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.k = 0

            def get_next(self):
                if self.k >= a.calib:
                    return None
                self.k += 1
                return {i.name: (rng.standard_normal(v.shape).astype(v.dtype) if v.dtype.kind == "f" else v)
                        for i, v in zip(ins, saved)}

        pre, qm = os.path.join(d, "pre.onnx"), os.path.join(d, "model.onnx")
        try:
            quant_pre_process(src, pre)
            quantize_static(pre, qm, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                            activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                            reduce_range=a.reduce_range)
        except Exception as e:  # noqa: BLE001 - a model the quantizer refuses is reported, the rest go on
            print(f"| {name} | quantizer failed: {str(e).splitlines()[0][:80]} | | | |")
            continue
        feeds = {i.name: v for i, v in zip(ins, saved)}
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        ref = ort.InferenceSession(qm, so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        flt = ort.InferenceSession(qm, so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        args = [a.dlcc, "run", qm, "-O2", "--backend", "cpu", "-o", os.path.join(d, "dlcc")] + precision(a, True)
        for i, v in zip(ins, saved):
            p = os.path.join(d, f"in_{i.name.replace('/', '_')}.npy")
            np.save(p, v)
            args += ["-i", f"{i.name}={p}"]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"| {name} | dlcc failed: {r.stderr.strip().splitlines()[-1][:100]} | | | |")
            continue
        out = os.path.join(d, "dlcc", m.graph.output[0].name.replace("/", "_").replace(":", "_") + ".npy")
        got = np.load(out)
        step = output_step(onnx.load(qm))
        if step is None:
            print(f"| {name} | output not quantized: max abs diff {np.abs(ref - got).max():.3g} | | | |")
            continue
        p1, m1 = agreement(ref, got, step)
        p2, m2 = agreement(ref, flt, step)
        p3, m3 = agreement(flt, got, step)
        print(f"| {name} | {p1:.2f}% | {m1:.2f} | {p2:.2f}% | {m2:.2f} | {p3:.2f}% | {m3:.2f} |", flush=True)
        if a.time:
            timings.append((name, time_model(a, name, src, qm, d, ins, saved, got)))
    if timings:
        print("\n| model | ORT int8 ms | dlcc int8 ms | ORT float ms | dlcc float ms | dlcc int8 / ORT int8 "
              "| dlcc int8 / dlcc float |")
        print("|---|--:|--:|--:|--:|--:|--:|")
        for name, t in timings:
            if isinstance(t, str):
                print(f"| {name} | {t} | | | | | |")
                continue
            oi, di, of, df = t
            print(f"| {name} | {oi:.2f} | {di:.2f} | {of:.2f} | {df:.2f} | {di / oi:.3f} | {di / df:.3f} |")


def precision(a, quantized):
    """dlcc's --precision arguments: --precision int8 for the quantized model when asked."""
    return ["--precision", "int8"] if quantized and a.precision == "int8" else []


def harness(a, model, d, ins, saved, want, quantized):
    """dlcc's object of `model` and bench/harness.c over a folder with its inputs and `want` as the
    expected output; the harness path, or an error string."""
    import numpy as np
    sys.path.insert(0, HERE)
    import dlcc_bench
    os.makedirs(d, exist_ok=True)
    r = subprocess.run([a.dlcc, model, "-O2", "--mcpu", "native", "--name", "m", "-o", d] + precision(a, quantized),
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "compile failed: " + r.stderr.strip().splitlines()[-1][:80]
    with open(os.path.join(d, "m.h")) as f:
        hdr = f.read()
    with open(os.path.join(d, "m_io.h"), "w") as f:
        f.write(dlcc_bench.io_header(hdr))
    for k, v in enumerate(saved):
        np.save(os.path.join(d, f"input_{k}.npy"), v)
    np.save(os.path.join(d, "output_0.npy"), want.astype(np.float32))
    exe = os.path.join(d, "harness")
    r = subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-O2", "-I", d, os.path.join(HERE, "harness.c"),
                        os.path.join(d, "m.o"), "-lm", "-o", exe], capture_output=True, text=True)
    return exe if r.returncode == 0 else "harness failed: " + r.stderr[:80]


def time_model(a, name, src, qm, d, ins, saved, got):
    """(ORT int8, dlcc int8, ORT float, dlcc float) medians in ms, or an error string."""
    import time
    import numpy as np
    import onnxruntime as ort
    runs = int(os.environ.get("RUNS", "20"))
    feeds = {i.name: v for i, v in zip(ins, saved)}
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sq = ort.InferenceSession(qm, so, providers=["CPUExecutionProvider"])
    sf = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    hq = harness(a, qm, os.path.join(d, "obj-int8"), ins, saved, got, True)
    hf = harness(a, src, os.path.join(d, "obj-float"), ins, saved, sf.run(None, feeds)[0], False)
    for h in (hq, hf):
        if not os.path.exists(h):
            return h
    t = {k: [] for k in ("oi", "di", "of", "df")}

    def ort_time(sess, n):
        sess.run(None, feeds)
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            sess.run(None, feeds)
            out.append((time.perf_counter() - t0) * 1e3)
        return out

    def dlcc_time(exe, n):
        # int8 outputs are exact against dlcc's own run; the float object within the bench's tolerance of ORT
        r = subprocess.run([exe, str(n), "1", "1e-3", "1e-4", os.path.dirname(exe)], capture_output=True, text=True)
        m = [ln for ln in r.stdout.splitlines() if ln.startswith("time_ms")]
        return [float(m[0].split("median=")[1].split()[0])] if m else [float("nan")]

    for _ in range(3):
        t["oi"] += ort_time(sq, runs)
        t["di"] += dlcc_time(hq, runs)
        t["of"] += ort_time(sf, runs)
        t["df"] += dlcc_time(hf, runs)
    med = {k: float(np.median(v)) for k, v in t.items()}
    return med["oi"], med["di"], med["of"], med["df"]


if __name__ == "__main__":
    main()
