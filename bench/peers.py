#!/usr/bin/env python3
"""Times the peers on the benchmark models: ONNX Runtime and PyTorch, batch 1.

    bench/peers.py [--runs N] [--warmup W] [--threads 1 2] [--dlcc WORK] [--rounds R] [--out OUT.json] [NAME ...]

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
a user would call it), median and min.

With --dlcc WORK (bench/dlcc_bench.py's directory: WORK/<name>/harness, WORK/<name>/threads2/harness
for 2 threads) dlcc is timed in the same stretch of time as each peer: the harness runs as a
server (bench/harness.c, RUNS 0) and the RUNS calls of each side are cut into R rounds that
alternate, peer then dlcc, each round one untimed call then its timed ones, after a 20 ms pause
(the other side's pool threads stop spinning).  A machine whose speed drifts (a VM sharing its
cores) then slows both sides alike, and the ratio compares like with like; results[peer][T][name]
gets "dlcc": {median_ms, min_ms, runs, check}.  The same for an empty model (the call overhead).  The output of the last call is compared with
MODELS/<name>/output_0.npy at rtol 1e-3, atol 1e-4.

Writes OUT.json: {"versions": {...}, "results": {peer: {threads: {name: {median_ms, min_ms, runs, check}}}}}.
"""

import argparse
import json
import os
import re
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


def median_min(t):
    t = sorted(t)
    n = len(t)
    return (t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])), t[0]


class Harness:
    """A dlcc harness serving timed runs: bench/harness.c started with RUNS 0."""

    def __init__(self, exe, warmup, mdir):
        self.p = subprocess.Popen([str(exe), "0", str(warmup), "1e-3", "1e-4", str(mdir)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.times = []

    def run(self, n):
        """n timed runs; False once the harness has failed (result() says how)."""
        try:
            self.p.stdin.write("%d\n" % n)
            self.p.stdin.flush()
            words = self.p.stdout.readline().split()
        except OSError:
            return False
        if not words or words[0] != "times_ms" or len(words) != n + 1:
            return False
        self.times += [float(w) for w in words[1:]]
        return True

    def result(self):
        try:
            out, _ = self.p.communicate()
        except OSError:
            out = ""
        check = re.search(r"^check (.*)$", out, re.M)
        if not self.times or self.p.returncode:
            return {"error": "the dlcc harness exited with status %d: %s" % (self.p.returncode, out.strip())}
        med, mn = median_min(self.times)
        return {"median_ms": med, "min_ms": mn, "runs": len(self.times),
                "check": check.group(1) if check else "harness exited with status %d" % self.p.returncode}


def timed(fn, runs, warmup, harness=None, rounds=1):
    """RUNS timed calls of fn after WARMUP; with a harness, in rounds alternating with dlcc's."""
    for _ in range(warmup):
        out = fn()
    t = []
    per = -(-runs // rounds) if harness else runs
    while len(t) < runs:
        k = min(per, runs - len(t))
        if harness:
            time.sleep(0.02)
            out = fn()
        for _ in range(k):
            t0 = time.perf_counter()
            out = fn()
            t.append((time.perf_counter() - t0) * 1e3)
        if harness:
            time.sleep(0.02)
            if not harness.run(k):
                harness = None
    med, mn = median_min(t)
    return med, mn, out


def with_dlcc(res, nm, dlcc, threads, models, warmup, run):
    """run(harness) times the peer on model nm, interleaved with dlcc's harness when there is one."""
    exe = dlcc / nm / ("harness" if threads == 1 else "threads2/harness") if dlcc else None
    h = Harness(exe, warmup, models / nm) if exe and exe.exists() else None
    try:
        res[nm] = run(h)
    finally:
        if h:
            res[nm]["dlcc"] = h.result()


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


def measure(peer, threads, names, models, runs, warmup, dlcc=None, rounds=1):
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

            def run(h):
                med, mn, out = timed(lambda: sess.run(None, feed)[0], runs, warmup, h, rounds)
                return {"median_ms": med, "min_ms": mn, "runs": runs,
                        "check": check(out, np.load(models / nm / "output_0.npy"))}
            with_dlcc(res, nm, dlcc, threads, models, warmup, run)
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

            def run(h):
                with torch.inference_mode():
                    med, mn, out = timed(lambda: model(x), runs, warmup, h, rounds)
                return {"median_ms": med, "min_ms": mn, "runs": runs,
                        "check": check(out.numpy(), np.load(models / nm / "output_0.npy"))}
            with_dlcc(res, nm, dlcc, threads, models, warmup, run)
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
    ap.add_argument("--dlcc", type=Path, help="dlcc_bench.py's work directory: time dlcc alongside each peer")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds with --dlcc (default 5)")
    ap.add_argument("--one", nargs=2, metavar=("PEER", "THREADS"), help=argparse.SUPPRESS)
    ap.add_argument("names", nargs="*")
    a = ap.parse_intermixed_args()
    py = ensure_venv()
    if py is not None:
        os.execv(str(py), [str(py), __file__] + sys.argv[1:])
    names = a.names or sorted(p.name for p in a.models.iterdir() if (p / "model.onnx").exists())
    if a.one:
        res = measure(a.one[0], int(a.one[1]), names, a.models, a.runs, a.warmup, a.dlcc, max(1, a.rounds))
        json.dump(res, sys.stdout)
        return 0
    out = {"versions": versions(), "results": {}}
    for peer in ("ort", "torch"):
        for t in a.threads:
            cmd = [sys.executable, __file__, "--one", peer, str(t), "--models", str(a.models), "--runs",
                   str(a.runs), "--warmup", str(a.warmup), "--rounds", str(a.rounds)] + \
                (["--dlcc", str(a.dlcc.resolve())] if a.dlcc else []) + names
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
                d = r.get("dlcc")
                print("%-5s %dT %-18s median %10.3f ms  min %10.3f ms  check %s%s" % (
                    peer, t, nm, r["median_ms"], r["min_ms"], r["check"],
                    "  (dlcc alongside: median %.3f ms min %.3f ms, ratio %.3f, check %s)" % (
                        d["median_ms"], d["min_ms"], d["median_ms"] / r["median_ms"], d["check"]) if d else ""),
                      flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
