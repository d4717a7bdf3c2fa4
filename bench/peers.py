#!/usr/bin/env python3
"""Times the peers on the benchmark models: ONNX Runtime, OpenVINO and PyTorch, batch 1.

    bench/peers.py [--runs N] [--warmup W] [--threads 1 2] [--peers ort ov torch] [--ov-pinning]
                   [--dlcc WORK] [--rounds R] [--out OUT.json] [NAME ...]

Creates bench/.venv on first use (`/usr/bin/python3 -m venv --system-site-packages`, so
Debian's torch, torchvision and numpy stay visible, then `pip install onnxruntime openvino
threadpoolctl`) and re-runs itself there.  Each (peer, thread count) is measured in a fresh process
so one peer's thread pool cannot disturb the other:

- ONNX Runtime (ort): CPUExecutionProvider, graph_optimization_level ORT_ENABLE_ALL,
  intra_op_num_threads T, inter_op_num_threads 1, sequential execution; on
  MODELS/<name>/model.onnx.
- OpenVINO (ov): the CPU plugin on MODELS/<name>/model.onnx (its ONNX front end), compiled with
  INFERENCE_PRECISION_HINT f32 (no bf16/f16 on CPUs that have them), PERFORMANCE_HINT LATENCY,
  NUM_STREAMS 1 and INFERENCE_NUM_THREADS T (one stream of T threads: 1 and 2 threads mean one and
  two cores' worth), ENABLE_HYPER_THREADING false, and ENABLE_CPU_PINNING false (as ORT's and
  dlcc's threads, placed by the OS; --ov-pinning keeps OpenVINO's default, pinned); one infer
  request, called synchronously (InferRequest.infer with share_inputs and share_outputs: no copy of
  the inputs and outputs, half the call's overhead on a small model).  The properties the compiled
  model reports are recorded (results["ov"][T]["_call_overhead"]["config"]).
- PyTorch (torch): the same nn.Module rebuilt by bench/models.py from its seeds (its output is
  checked to equal the saved reference), torch.set_num_threads(T), torch.inference_mode().

Each model: WARMUP calls, then RUNS timed calls (time.perf_counter around the Python call, as
a user would call it), median and min.  A model's inputs are MODELS/<name>/input_K.npy, K = 0, 1, ...

With --dlcc WORK (bench/dlcc_bench.py's directory: WORK/<name>/harness, WORK/<name>/threads2/harness
for 2 threads) dlcc is timed in the same stretch of time as each peer: the harness runs as a
server (bench/harness.c, RUNS 0) and the RUNS calls of each side are cut into R rounds that
alternate, peer then dlcc, each round one untimed call then its timed ones, after a PAUSE_S pause
(the other side's pool threads stop spinning).  A machine whose speed drifts (a VM sharing its
cores) then slows both sides alike, and the ratio compares like with like; results[peer][T][name]
gets "dlcc": {median_ms, min_ms, runs, check}.  The same for an empty model (the call overhead).
The output of the last call is compared with MODELS/<name>/output_0.npy at rtol 1e-3, atol 1e-4.
A model a peer cannot load or run is recorded with the error ({"error": ...}), and the others go on.

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
PIP = ["onnxruntime", "openvino", "threadpoolctl"]
PEERS = {"ort": "ONNX Runtime", "ov": "OpenVINO", "torch": "PyTorch"}


def ensure_venv():
    py = VENV / "bin" / "python"
    if Path(sys.prefix).resolve() == VENV.resolve():
        return None
    # threadpoolctl names the BLAS the peers call (Debian has it only as a dependency of other packages)
    if not py.exists() or subprocess.run([str(py), "-c", "import onnxruntime, openvino, threadpoolctl"],
                                         capture_output=True).returncode:
        try:
            subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(VENV)], check=True)
            subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"] + PIP,
                           check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            sys.exit("peers.py: could not set up %s with %s (%s); it needs Debian's python3-venv and "
                     "network access to PyPI once" % (VENV, " ".join(PIP), e))
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


# Seconds between one side's round and the other's.  ONNX Runtime's intra-op threads spin after a
# call (allow_spinning, its default) for longer than 20 ms, the pause until 2026-11-28: on a 2-core
# AMD guest dlcc's 2-thread transformer_encoder then took 4.03 ms alongside ORT against 1.92 ms alone
# (SqueezeNet 12.0 against 6.7), and 1.96 with ORT's spinning off; after 200 ms, 1.91 (and ORT's own
# median 2.17 instead of 2.58).
PAUSE_S = 0.2


def timed(fn, runs, warmup, harness=None, rounds=1):
    """RUNS timed calls of fn after WARMUP; with a harness, in rounds alternating with dlcc's."""
    for _ in range(warmup):
        out = fn()
    t = []
    per = -(-runs // rounds) if harness else runs
    while len(t) < runs:
        k = min(per, runs - len(t))
        if harness:
            time.sleep(PAUSE_S)
            out = fn()
        for _ in range(k):
            t0 = time.perf_counter()
            out = fn()
            t.append((time.perf_counter() - t0) * 1e3)
        if harness:
            time.sleep(PAUSE_S)
            if not harness.run(k):
                harness = None
    med, mn = median_min(t)
    return med, mn, out


def with_dlcc(res, nm, dlcc, threads, models, warmup, run, what):
    """run(harness) times the peer on model nm, interleaved with dlcc's harness when there is one;
    an exception is recorded as the model's error (what names the peer)."""
    exe = dlcc / nm / ("harness" if threads == 1 else "threads2/harness") if dlcc else None
    h = Harness(exe, warmup, models / nm) if exe and exe.exists() else None
    try:
        res[nm] = run(h)
    except Exception as e:  # a model the peer cannot load or run is a result, not the end of the run
        res[nm] = {"error": "%s failed on it: %s: %s" % (what, type(e).__name__, str(e).strip()[:1000])}
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


def identity_onnx():
    import onnx
    h, f = onnx.helper, onnx.TensorProto.FLOAT
    return h.make_model(h.make_graph([h.make_node("Identity", ["x"], ["y"])], "ident",
                                     [h.make_tensor_value_info("x", f, [1, 64])],
                                     [h.make_tensor_value_info("y", f, [1, 64])]),
                        opset_imports=[h.make_opsetid("", 13)]).SerializeToString()


def load_inputs(mdir):
    """MODELS/<name>/input_0.npy, input_1.npy, ... in order."""
    import numpy as np
    xs = []
    while (mdir / ("input_%d.npy" % len(xs))).exists():
        xs.append(np.load(mdir / ("input_%d.npy" % len(xs))))
    return xs


# Each peer: peer_X(threads, options) -> (a call of the empty model on x, load(name, model dir, inputs)
# -> a call of the model returning its first output, the settings the peer reports, for the results)

def peer_ort(threads, opts):
    import onnxruntime as ort

    def session(model):
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])

    def load(nm, mdir, xs):
        sess = session(str(mdir / "model.onnx"))
        feed = {i.name: x for i, x in zip(sess.get_inputs(), xs)}
        return lambda: sess.run(None, feed)[0]
    ident = session(identity_onnx())
    return lambda x: ident.run(None, {"x": x})[0], load, {}


def peer_ov(threads, opts):
    import openvino as ov
    core = ov.Core()
    config = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1,
              "INFERENCE_NUM_THREADS": threads, "ENABLE_HYPER_THREADING": False,
              "ENABLE_CPU_PINNING": bool(opts.ov_pinning)}

    def request(model):
        return core.compile_model(model, "CPU", config)

    def load(nm, mdir, xs):
        req = request(core.read_model(str(mdir / "model.onnx"))).create_infer_request()
        feed = dict(enumerate(xs))
        return lambda: req.infer(feed, share_inputs=True, share_outputs=True)[0]
    ident = request(core.read_model(identity_onnx(), b""))
    got = {k: ident.get_property(k) for k in ("INFERENCE_PRECISION_HINT", "PERFORMANCE_HINT", "NUM_STREAMS",
                                              "INFERENCE_NUM_THREADS", "ENABLE_HYPER_THREADING", "ENABLE_CPU_PINNING")}
    got = {k: v.to_string() if isinstance(v, ov.Type) else str(v) for k, v in got.items()}
    req = ident.create_infer_request()
    return lambda x: req.infer({0: x}, share_inputs=True, share_outputs=True)[0], load, got


def peer_torch(threads, opts):
    import torch
    sys.path.insert(0, str(HERE))
    import models as bm
    torch.set_num_threads(threads)
    ident = torch.nn.Identity()

    def call(model, xts):
        def run():
            with torch.inference_mode():
                return model(*xts).numpy()
        return run

    def load(nm, mdir, xs):
        return call(bm.make(nm)[0], [torch.from_numpy(x) for x in xs])
    return lambda x: call(ident, [torch.from_numpy(x)])(), load, {}


def measure(peer, threads, names, models, runs, warmup, dlcc=None, rounds=1, opts=None):
    """One peer at one thread count, in this process."""
    import numpy as np
    res = {}
    ident, load, config = {"ort": peer_ort, "ov": peer_ov, "torch": peer_torch}[peer](threads, opts)
    x1 = np.zeros((1, 64), np.float32)
    med, mn, _ = timed(lambda: ident(x1), runs, warmup)
    res[OVERHEAD] = {"median_ms": med, "min_ms": mn, "runs": runs, "check": "ok"}
    if config:
        res[OVERHEAD]["config"] = config
    for nm in names:
        mdir = models / nm

        def run(h):
            fn = load(nm, mdir, load_inputs(mdir))
            med, mn, out = timed(fn, runs, warmup, h, rounds)
            return {"median_ms": med, "min_ms": mn, "runs": runs,
                    "check": check(out, np.load(mdir / "output_0.npy"))}
        with_dlcc(res, nm, dlcc, threads, models, warmup, run, PEERS[peer])
    return res


def versions():
    import numpy
    import onnxruntime
    import openvino
    import threadpoolctl
    import torch
    with threadpoolctl.threadpool_limits(1):
        pass
    torch.zeros(4, 4) @ torch.zeros(4, 4)
    blas = [{"lib": i.get("internal_api"), "version": i.get("version"), "kernel": i.get("architecture"),
             "file": i.get("filepath")} for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    return {"onnxruntime": onnxruntime.__version__, "openvino": openvino.__version__, "torch": torch.__version__,
            "numpy": numpy.__version__, "python": sys.version.split()[0], "torch_blas": blas,
            "torch_config": torch.__config__.show().strip().splitlines()[:6]}


def line(peer, t, nm, r):
    """The console line of one result."""
    if "error" in r:
        return "%-5s %dT %-26s ERROR: %s" % (peer, t, nm, r["error"].splitlines()[0][:300])
    d = r.get("dlcc")
    return "%-5s %dT %-26s median %10.3f ms  min %10.3f ms  check %s%s" % (
        peer, t, nm, r["median_ms"], r["min_ms"], r["check"],
        "" if not d else "  (dlcc alongside: %s)" % d["error"] if "error" in d else
        "  (dlcc alongside: median %.3f ms min %.3f ms, ratio %.3f, check %s)" % (
            d["median_ms"], d["min_ms"], d["median_ms"] / r["median_ms"], d["check"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=Path, default=HERE / "build" / "models")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--peers", nargs="+", choices=list(PEERS), default=list(PEERS),
                    help="which peers (default: all: %s)" % ", ".join("%s %s" % kv for kv in PEERS.items()))
    ap.add_argument("--ov-pinning", action="store_true",
                    help="OpenVINO with ENABLE_CPU_PINNING true (its default) instead of false")
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
    missing = [nm for nm in names if not (a.models / nm / "model.onnx").exists()]
    if missing:
        sys.exit("peers.py: no %s/<name>/model.onnx for %s (export them with bench/models.py)" % (
            a.models, ", ".join(missing)))
    if a.one:
        # the result goes to --out, not stdout, which the peers' libraries may write to
        res = measure(a.one[0], int(a.one[1]), names, a.models, a.runs, a.warmup, a.dlcc, max(1, a.rounds), a)
        a.out.write_text(json.dumps(res))
        return 0
    out = {"versions": versions(), "results": {}}
    part = a.out.with_suffix(".part.json")
    for peer in a.peers:
        for t in a.threads:
            cmd = [sys.executable, __file__, "--one", peer, str(t), "--models", str(a.models), "--runs",
                   str(a.runs), "--warmup", str(a.warmup), "--rounds", str(a.rounds), "--out", str(part)] + \
                (["--dlcc", str(a.dlcc.resolve())] if a.dlcc else []) + (["--ov-pinning"] if a.ov_pinning else []) + \
                ["--"] + names
            # torch.set_num_threads sets OpenMP's pool; OpenBLAS (which Debian's torch calls for
            # some matrix products) has its own, limited here to the same count.
            env = dict(os.environ, OMP_NUM_THREADS=str(t), OPENBLAS_NUM_THREADS=str(t))
            part.unlink(missing_ok=True)
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
            if p.returncode or not part.exists():
                print("%s %dT failed (status %d):\n%s" % (peer, t, p.returncode, p.stderr), file=sys.stderr)
                out["results"].setdefault(peer, {})[str(t)] = {"error": p.stderr.strip()[-2000:]}
                continue
            res = json.loads(part.read_text())
            part.unlink()
            out["results"].setdefault(peer, {})[str(t)] = res
            for nm, r in res.items():
                print(line(peer, t, nm, r), flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
