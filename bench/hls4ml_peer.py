#!/usr/bin/env python3
"""dlcc's FPGA target beside hls4ml 1.3 on the models hls4ml is built for (issue 26).

Both compile the same PyTorch module (tests/e2e/export_models.py's jet-tagging MLP 16-64-32-32-5
and RAIDER-like CNN, seeded and trained as the e2e models are) in the TEXTAROSSA formats: weights
and biases fixed<8,1>, activations fixed<16,6> (tests/fpga/precision.json; in hls4ml the layers'
`weight` / `bias` and `result` precisions).  Neither is synthesized (no Vitis here): each is
C-simulated on the same N inputs (dlcc: NAME.cpp built with g++ and Xilinx's ap_types headers, run
through NAME_run_ptrs; hls4ml: `HLSModel.compile()` / `predict()`, its own bit-accurate C++), and
compared with PyTorch's float32 output: max and mean abs error, and top-1 agreement.  dlcc's columns
also give its estimate (DSP, LUT, BRAM18K, latency, interval at 200 MHz on the U50); hls4ml states
resources only after Vitis synthesis, so its columns have none.

    python bench/hls4ml_peer.py [--n 200] [--out FILE.md] [--dlcc build/tools/dlcc]

Needs PyTorch and hls4ml in one interpreter: Debian's python3-torch with hls4ml from PyPI, e.g.
    /usr/bin/python3 -m venv --system-site-packages .venv-hls4ml
    .venv-hls4ml/bin/pip install hls4ml==1.3.0
    .venv-hls4ml/bin/python bench/hls4ml_peer.py
"""

import argparse
import ctypes
import json
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import export_models as em  # noqa: E402

WEIGHTS, ACTS = "fixed<8,1>", "fixed<16,6>"
# name: (hls4ml io_type, test inputs from the model's own data generator, batch of the compiled model)
MODELS = {
    "jet": ("io_parallel", lambda gen, n: em.jet_data(gen, n)[0]),
    "raider": ("io_stream", lambda gen, n: em.raider_data(gen, n)[0]),
}


def ap_types_dir():
    import hls4ml
    return Path(hls4ml.__file__).parent / "templates" / "vivado" / "ap_types"


def stats(got, ref):
    err = np.abs(got - ref)
    top1 = float((got.argmax(-1) == ref.argmax(-1)).mean())
    return float(err.max()), float(err.mean()), top1


def run_dlcc(dlcc, name, model, shape, xs, tmp):
    """Compile with dlcc -t fpga (fixed point), build the design as a shared library, run it on xs."""
    onnx_path = tmp / (name + ".onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(shape),), str(onnx_path), opset_version=em.OPSET,
                          input_names=["input"], output_names=["output"])
    out = tmp / ("dlcc_" + name)
    t0 = time.perf_counter()
    p = subprocess.run([dlcc, str(onnx_path), "-t", "fpga", "--name", "m", "-o", str(out), "--precision-file",
                        str(ROOT / "tests" / "fpga" / "precision.json")], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit("dlcc failed on %s: %s" % (name, p.stderr))
    lib = out / "libm.so"
    p = subprocess.run(["g++", "-std=c++14", "-O2", "-shared", "-fPIC", "-w", "-isystem", str(ap_types_dir()),
                        "-I", str(out), str(out / "m.cpp"), "-o", str(lib)], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit("the dlcc design of %s did not build: %s" % (name, p.stderr[-2000:]))
    compile_s = time.perf_counter() - t0
    ws = int(re.search(r"#define m_WORKSPACE_SIZE\s+(\d+)", (out / "m.h").read_text()).group(1))
    so = ctypes.CDLL(str(lib))
    so.m_run_ptrs.restype = ctypes.c_int32
    wsbuf = (ctypes.c_char * max(ws, 1))()
    batch = shape[0]
    outs = []
    for i in range(0, len(xs), batch):
        xb = np.ascontiguousarray(xs[i:i + batch], dtype=np.float32)
        if len(xb) < batch:
            xb = np.concatenate([xb, np.zeros((batch - len(xb),) + xb.shape[1:], np.float32)])
        yb = np.zeros((batch, model_out(model, shape)), np.float32)
        ins = (ctypes.c_void_p * 1)(xb.ctypes.data)
        outp = (ctypes.c_void_p * 1)(yb.ctypes.data)
        rc = so.m_run_ptrs(ins, outp, wsbuf)
        if rc != 0:
            raise SystemExit("m_run_ptrs returned %d" % rc)
        outs.append(yb)
    rep = json.loads((out / "m.report.json").read_text())
    return np.concatenate(outs)[:len(xs)], rep, compile_s


def model_out(model, shape):
    with torch.no_grad():
        return int(model(torch.zeros(shape)).shape[-1])


def run_hls4ml(name, model, io_type, xs, tmp, textarossa):
    """textarossa: weights and biases fixed<8,1>, results fixed<16,6>; else hls4ml's own defaults
    from default_precision fixed<16,6> (weights, biases, results; accumulators and tables 'auto')."""
    import hls4ml
    shape = tuple(xs.shape[1:])
    cfg = hls4ml.utils.config_from_pytorch_model(model, input_shape=shape, granularity="name",
                                                 default_precision=ACTS, backend="Vitis")
    for layer in cfg["LayerName"].values():
        prec = layer.setdefault("Precision", {})
        for k in ("weight", "bias"):
            if k in prec and textarossa:
                prec[k] = WEIGHTS
        if "result" in prec and textarossa:
            prec["result"] = ACTS
        layer["ReuseFactor"] = 1
    t0 = time.perf_counter()
    hm = hls4ml.converters.convert_from_pytorch_model(model, hls_config=cfg,
                                                      output_dir=str(tmp / ("hls4ml_%s_%d" % (name, textarossa))),
                                                      backend="Vitis", io_type=io_type, part="xcu50-fsvh2104-2-e")
    hm.compile()
    compile_s = time.perf_counter() - t0
    y = hm.predict(np.ascontiguousarray(xs, dtype=np.float32))
    return np.asarray(y, dtype=np.float32).reshape(len(xs), -1), compile_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--dlcc", default=str(ROOT / "build" / "tools" / "dlcc"))
    a = ap.parse_args()
    import hls4ml
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlcc-hls4ml-") as tmp:
        tmp = Path(tmp)
        for name, (io_type, data) in MODELS.items():
            model = em.make_model(name)
            shape = list(em.MODELS[name][1])
            xs = data(torch.Generator().manual_seed(4242), a.n).numpy().astype(np.float32)
            with torch.no_grad():
                ref = model(torch.from_numpy(xs)).numpy()
            yd, rep, tdl = run_dlcc(a.dlcc, name, model, shape, xs, tmp)
            yh, th = run_hls4ml(name, model, io_type, xs, tmp, True)
            yh2, th2 = run_hls4ml(name, model, io_type, xs, tmp, False)
            rows.append((name, io_type, stats(yd, ref), stats(yh, ref), stats(yh2, ref), rep, tdl, th, th2))
    lines = ["# dlcc -t fpga beside hls4ml %s (C simulation, no synthesis)" % hls4ml.__version__, "",
             "`%s`: %d inputs per model, weights and biases %s, activations %s (hls4ml's \"own defaults\" rows: "
             "`default_precision` %s, every other precision hls4ml's `auto`); errors against PyTorch float32; "
             "ReuseFactor 1 in hls4ml, dlcc's multipliers chosen for the U50. dlcc's time: dlcc and g++ -O2 of "
             "NAME.cpp; hls4ml's: conversion and `compile()`." % (
                 " ".join(["bench/hls4ml_peer.py"] + sys.argv[1:]), a.n, WEIGHTS, ACTS, ACTS), "",
             "| model | tool | io | max abs err | mean abs err | top-1 = float | DSP | LUT | BRAM18K | "
             "latency (cycles) | interval | compile + C-sim build (s) |",
             "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for name, io_type, sd, sh, sh2, rep, tdl, th, th2 in rows:
        io = "stream (%d FIFOs)" % len(rep["streams"]) if rep.get("streams") else "arrays"
        lines.append("| %s | dlcc | %s | %.4g | %.4g | %.1f%% | %d | %d | %d | %d | %d | %.1f |" % (
            name, io, sd[0], sd[1], 100 * sd[2], rep["dsp"], rep["lut"], rep["bram_18k"],
            rep["latency_cycles"], rep["interval_cycles"], tdl))
        for what, s, t in (("hls4ml", sh, th), ("hls4ml, own defaults", sh2, th2)):
            lines.append("| %s | %s | %s | %.4g | %.4g | %.1f%% | (Vitis) | (Vitis) | (Vitis) | (Vitis) | (Vitis) | %.1f |" % (
                name, what, io_type, s[0], s[1], 100 * s[2], t))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        a.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
