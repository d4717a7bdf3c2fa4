#!/usr/bin/env python3
"""dlcc --precision bf16 against OpenVINO's default precision, one thread.

    bench/bf16.py [--dlcc PATH] [--runs N] [NAME ...]     (default: resnet18 mobilenet_v2 transformer_encoder)

Issue 30 asks bf16 to take at most OpenVINO's default-precision time on ResNet-18, MobileNetV2 and a
transformer encoder layer on hosts with AVX512-BF16 or AMX (where OpenVINO's CPU plugin defaults to
bf16 inference).  For each bench model (bench/build/models/NAME, from bench/models.py):

- dlcc `-O2 --mcpu native`, float32 and `--precision bf16`, timed by bench/harness.c against the
  model's saved output (float32 at rtol 1e-3 / atol 1e-4; bf16 at 5e-2 / 5e-2, the harness's check
  only: the accuracy contract is docs/cli.md's, tested in tests/unit/test_lower_qconv.c);
- OpenVINO, one inference thread, latency hint: its default precision (INFERENCE_PRECISION_HINT
  unset; the report shows what it chose) and f32.

RUNS (default 20) calls a side, the four alternating in 3 rounds; medians in ms, and dlcc bf16 as a
ratio of OpenVINO's default-precision time and of dlcc's float32 time.  The dlcc side prints the
report's bf16_products (VDPBF16PS or emulated).  Runs in bench/.venv (bench/peers.py makes it).
Never run in CI.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def harness(a, name, precision, d):
    """The harness of dlcc's object of NAME at `precision` in d, or an error string."""
    sys.path.insert(0, HERE)
    import dlcc_bench
    src = os.path.join(HERE, "build", "models", name)
    os.makedirs(d, exist_ok=True)
    r = subprocess.run([a.dlcc, os.path.join(src, "model.onnx"), "-O2", "--mcpu", "native", "--precision", precision,
                        "--emit", "obj,header,report", "--name", "m", "-o", d], capture_output=True, text=True)
    if r.returncode:
        return "compile failed: " + (r.stderr.strip().splitlines() or [""])[-1][:80]
    with open(os.path.join(d, "m.h")) as f:
        hdr = f.read()
    with open(os.path.join(d, "m_io.h"), "w") as f:
        f.write(dlcc_bench.io_header(hdr))
    for f in os.listdir(src):
        if f.endswith(".npy"):
            subprocess.run(["cp", os.path.join(src, f), d], check=True)
    exe = os.path.join(d, "harness")
    r = subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-O2", "-I", d, os.path.join(HERE, "harness.c"),
                        os.path.join(d, "m.o"), "-lm", "-o", exe], capture_output=True, text=True)
    return exe if r.returncode == 0 else "harness failed: " + r.stderr[:80]


def dlcc_time(exe, n, tol):
    r = subprocess.run([exe, str(n), "1", tol, tol, os.path.dirname(exe)], capture_output=True, text=True)
    m = [ln for ln in r.stdout.splitlines() if ln.startswith("time_ms")]
    return float(m[0].split("median=")[1].split()[0]) if m and "FAIL" not in r.stdout else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlcc", default=os.path.join(HERE, "..", "build", "tools", "dlcc"))
    ap.add_argument("--runs", type=int, default=int(os.environ.get("RUNS", "20")))
    ap.add_argument("names", nargs="*", default=["resnet18", "mobilenet_v2", "transformer_encoder"])
    a = ap.parse_args()
    import numpy as np
    import openvino as ov
    core = ov.Core()
    print("| model | OV default ms (its precision) | OV f32 ms | dlcc f32 ms | dlcc bf16 ms | dlcc bf16 / OV default "
          "| dlcc bf16 / dlcc f32 | bf16 products |")
    print("|---|--:|--:|--:|--:|--:|--:|---|")
    for name in a.names:
        src = os.path.join(HERE, "build", "models", name)
        work = os.path.join(HERE, "build", "bf16", name)
        hf, hb = harness(a, name, "float32", work + "-f32"), harness(a, name, "bf16", work + "-bf16")
        if not os.path.exists(hf) or not os.path.exists(hb):
            print(f"| {name} | {hf if not os.path.exists(hf) else hb} | | | | | | |")
            continue
        with open(os.path.join(work + "-bf16", "m.report.json")) as f:
            prod = json.load(f).get("bf16_products", "?")
        ins, k = [], 0
        while os.path.exists(os.path.join(src, f"input_{k}.npy")):
            ins.append(np.load(os.path.join(src, f"input_{k}.npy")))
            k += 1
        reqs, chosen = {}, ""
        for hint in ("default", "f32"):
            cfg = {"INFERENCE_NUM_THREADS": "1", "PERFORMANCE_HINT": "LATENCY"}
            if hint == "f32":
                cfg["INFERENCE_PRECISION_HINT"] = "f32"
            m = core.compile_model(os.path.join(src, "model.onnx"), "CPU", cfg)
            if hint == "default":
                chosen = m.get_property("INFERENCE_PRECISION_HINT").get_type_name()
            reqs[hint] = m.create_infer_request()
            for _ in range(3):
                reqs[hint].infer(ins)
        t = {k: [] for k in ("ovd", "ovf", "df", "db")}

        def ov_time(req, n):
            out = []
            for _ in range(n):
                t0 = time.perf_counter()
                req.infer(ins)
                out.append((time.perf_counter() - t0) * 1e3)
            return out

        for _ in range(3):
            t["ovd"] += ov_time(reqs["default"], a.runs)
            t["ovf"] += ov_time(reqs["f32"], a.runs)
            t["df"].append(dlcc_time(hf, a.runs, "1e-3"))
            t["db"].append(dlcc_time(hb, a.runs, "5e-2"))
        med = {k: float(np.median(v)) for k, v in t.items()}
        print(f"| {name} | {med['ovd']:.2f} ({chosen}) | {med['ovf']:.2f} | {med['df']:.2f} | {med['db']:.2f} | "
              f"{med['db'] / med['ovd']:.3f} | {med['db'] / med['df']:.3f} | {prod} |", flush=True)


if __name__ == "__main__":
    main()
