#!/usr/bin/env python3
"""Times the peers on the benchmark models: ONNX Runtime and PyTorch, batch 1.

    bench/peers.py [--runs N] [--warmup W] [--threads 1 2] [--out OUT.json] [NAME ...]

Creates bench/.venv on first use (`/usr/bin/python3 -m venv --system-site-packages`, so
Debian's torch, torchvision and numpy stay visible, then `pip install onnxruntime threadpoolctl`) and
re-runs itself there.  Each (peer, thread count) is measured in a fresh process so one
peer's thread pool cannot disturb the other:

- ONNX Runtime: CPUExecutionProvider, graph_optimization_level ORT_ENABLE_ALL,
  intra_op_num_threads T, inter_op_num_threads 1, sequential execution; on
  MODELS/<name>/model.onnx.
- PyTorch: the same nn.Module rebuilt by bench/models.py from its seeds (its output is
  checked to equal the saved reference), torch.set_num_threads(T), torch.inference_mode().

Each model: WARMUP calls, then RUNS timed calls (time.perf_counter around the Python call, as
a user would call it), median and min.  The same for an empty model (the call overhead).  The output of the last call is compared with
MODELS/<name>/output_0.npy at rtol 1e-3, atol 1e-4.

Writes OUT.json: {"versions": {...}, "results": {peer: {threads: {name: {median_ms, min_ms, runs, check}}}}}.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The time of one call of an empty model (ONNX Identity, nn.Identity) on [1,64]: the floor of the
# Python-level timing, which the smallest models are close to.
OVERHEAD = "_call_overhead"
VENV = HERE / ".venv"


def ensure_venv():
    py = VENV / "bin" / "python"
    if Path(sys.prefix).resolve() == VENV.resolve():
        return None
    # threadpoolctl names the BLAS the peers call (Debian has it only as a dependency of other packages)
    if not py.exists() or subprocess.run([str(py), "-c", "import onnxruntime, threadpoolctl"],
                                         capture_output=True).returncode:
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "onnxruntime",
                        "threadpoolctl"], check=True)
    return py


def timed(fn, runs, warmup):
    for _ in range(warmup):
        out = fn()
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        t.append((time.perf_counter() - t0) * 1e3)
    t.sort()
    med = t[runs // 2] if runs % 2 else 0.5 * (t[runs // 2 - 1] + t[runs // 2])
    return med, t[0], out


def check(got, want):
    import numpy as np
    got = np.asarray(got, dtype=np.float32)
    if got.shape != want.shape:
        return "MISMATCH shape %s, want %s" % (got.shape, want.shape)
    err = np.abs(got.astype(np.float64) - want)
    bad = ~(err <= 1e-4 + 1e-3 * np.abs(want))
    if bad.any():
        return "MISMATCH %d of %d elements, max_abs_err=%.3g" % (bad.sum(), bad.size, err.max())
    return "ok max_abs_err=%.3g" % err.max()


def measure(peer, threads, names, models, runs, warmup):
    """One peer at one thread count, in this process."""
    import numpy as np
    res = {}
    x1 = np.zeros((1, 64), np.float32)
    if peer == "ort":
        import onnx
        import onnxruntime as ort
        h, f = onnx.helper, onnx.TensorProto.FLOAT
        ident = h.make_model(h.make_graph([h.make_node("Identity", ["x"], ["y"])], "ident",
                                          [h.make_tensor_value_info("x", f, [1, 64])],
                                          [h.make_tensor_value_info("y", f, [1, 64])]),
                             opset_imports=[h.make_opsetid("", 13)])
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        sess = ort.InferenceSession(ident.SerializeToString(), so, providers=["CPUExecutionProvider"])
        med, mn, _ = timed(lambda: sess.run(None, {"x": x1})[0], runs, warmup)
        res[OVERHEAD] = {"median_ms": med, "min_ms": mn, "runs": runs, "check": "ok"}
        for nm in names:
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            sess = ort.InferenceSession(str(models / nm / "model.onnx"), so, providers=["CPUExecutionProvider"])
            x = np.load(models / nm / "input_0.npy")
            feed = {sess.get_inputs()[0].name: x}
            med, mn, out = timed(lambda: sess.run(None, feed)[0], runs, warmup)
            res[nm] = {"median_ms": med, "min_ms": mn, "runs": runs,
                       "check": check(out, np.load(models / nm / "output_0.npy"))}
    else:
        import torch
        sys.path.insert(0, str(HERE))
        import models as bm
        torch.set_num_threads(threads)
        ident, xt = torch.nn.Identity(), torch.from_numpy(x1)
        with torch.inference_mode():
            med, mn, _ = timed(lambda: ident(xt), runs, warmup)
        res[OVERHEAD] = {"median_ms": med, "min_ms": mn, "runs": runs, "check": "ok"}
        for nm in names:
            model = bm.make(nm)[0]
            x = torch.from_numpy(np.load(models / nm / "input_0.npy"))
            with torch.inference_mode():
                med, mn, out = timed(lambda: model(x), runs, warmup)
            res[nm] = {"median_ms": med, "min_ms": mn, "runs": runs,
                       "check": check(out.numpy(), np.load(models / nm / "output_0.npy"))}
    return res


def versions():
    import numpy
    import onnxruntime
    import threadpoolctl
    import torch
    with threadpoolctl.threadpool_limits(1):
        pass
    torch.zeros(4, 4) @ torch.zeros(4, 4)
    blas = [{"lib": i.get("internal_api"), "version": i.get("version"), "kernel": i.get("architecture"),
             "file": i.get("filepath")} for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    return {"onnxruntime": onnxruntime.__version__, "torch": torch.__version__, "numpy": numpy.__version__,
            "python": sys.version.split()[0], "torch_blas": blas,
            "torch_config": torch.__config__.show().strip().splitlines()[:6]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=Path, default=HERE / "build" / "models")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--out", type=Path, default=HERE / "build" / "peers.json")
    ap.add_argument("--one", nargs=2, metavar=("PEER", "THREADS"), help=argparse.SUPPRESS)
    ap.add_argument("names", nargs="*")
    a = ap.parse_intermixed_args()
    py = ensure_venv()
    if py is not None:
        os.execv(str(py), [str(py), __file__] + sys.argv[1:])
    names = a.names or sorted(p.name for p in a.models.iterdir() if (p / "model.onnx").exists())
    if a.one:
        res = measure(a.one[0], int(a.one[1]), names, a.models, a.runs, a.warmup)
        json.dump(res, sys.stdout)
        return 0
    out = {"versions": versions(), "results": {}}
    for peer in ("ort", "torch"):
        for t in a.threads:
            cmd = [sys.executable, __file__, "--one", peer, str(t), "--models", str(a.models), "--runs",
                   str(a.runs), "--warmup", str(a.warmup)] + names
            # torch.set_num_threads sets OpenMP's pool; OpenBLAS (which Debian's torch calls for
            # some matrix products) has its own, limited here to the same count.
            env = dict(os.environ, OMP_NUM_THREADS=str(t), OPENBLAS_NUM_THREADS=str(t))
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if p.returncode:
                print("%s %dT failed:\n%s" % (peer, t, p.stderr), file=sys.stderr)
                out["results"].setdefault(peer, {})[str(t)] = {"error": p.stderr.strip()[-2000:]}
                continue
            res = json.loads(p.stdout)
            out["results"].setdefault(peer, {})[str(t)] = res
            for nm, r in res.items():
                print("%-5s %dT %-18s median %10.3f ms  min %10.3f ms  check %s" % (
                    peer, t, nm, r["median_ms"], r["min_ms"], r["check"]), flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
