#!/usr/bin/python3
"""Writes the Markdown results of one bench/run.sh run to stdout.

    bench/report.py --build bench/build --dlcc DLCC --cc CC
    bench/report.py --build bench/build --summary

Reads BUILD/run.json (times, load averages, run counts), BUILD/dlcc.json (bench/dlcc_bench.py),
BUILD/peers.json (bench/peers.py), BUILD/gemm.txt (bench/gemm.c lines) and BUILD/peak.txt
(bench/peak.c lines), and describes the
machine (lscpu, /proc/meminfo, compiler, LLVM, library versions).

The headline figure is dlcc against the best peer: per model and thread count, dlcc's time over
the fastest of ONNX Runtime, OpenVINO and PyTorch (among those whose output matched), with the
geometric mean over the models and the worst model, the folded and unfolded
(do_constant_folding=False, names ending in -nofold) exports counted apart.  --summary prints that as
plain text (bench/run.sh shows it at the end) instead of the Markdown.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def sh(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, shell=isinstance(cmd, str))
        return p.stdout.strip()
    except OSError:
        return ""


def machine(a, peers, run):
    lscpu = dict(re.findall(r"^([^:]+):\s*(.*)$", sh(["lscpu"]), re.M))
    flags = lscpu.get("Flags", "").split()
    simd = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                        "avx512_bf16", "avx_vnni", "amx_tile") if f in flags]
    mem = re.search(r"MemTotal:\s*(\d+) kB", Path("/proc/meminfo").read_text())
    v = peers.get("versions", {})
    llvm = sh("llvm-config-19 --version") or sh("llvm-config --version")
    rows = [
        ("CPU", "%s (vendor %s, family %s, model %s)" % (lscpu.get("Model name", "?"), lscpu.get("Vendor ID", "?"),
                                                       lscpu.get("CPU family", "?"), lscpu.get("Model", "?"))),
        ("Cores", "%s logical CPUs, %s thread(s) per core, %s socket(s)%s" % (
            lscpu.get("CPU(s)", "?"), lscpu.get("Thread(s) per core", "?"), lscpu.get("Socket(s)", "?"),
            ", hypervisor " + lscpu["Hypervisor vendor"] if "Hypervisor vendor" in lscpu else "")),
        ("Caches", "L1d %s, L2 %s, L3 %s" % (lscpu.get("L1d cache", "?"), lscpu.get("L2 cache", "?"),
                                             lscpu.get("L3 cache", "?"))),
        ("SIMD flags", " ".join(simd)),
        ("Memory", "%.1f GiB" % (int(mem.group(1)) / 2**20) if mem else "?"),
        ("OS", sh("uname -sr") + ", " + (sh(". /etc/os-release && echo $PRETTY_NAME") or "?")),
        ("C compiler", sh([a.cc, "--version"]).splitlines()[0] if sh([a.cc, "--version"]) else a.cc),
        ("LLVM (dlcc's back end)", llvm or "?"),
        ("dlcc", "commit %s, release build (meson --buildtype=release)" % (
            run.get("commit") or sh("git rev-parse --short HEAD"))),
        ("ONNX Runtime", "%s (PyPI wheel, CPUExecutionProvider)" % v.get("onnxruntime", "?")),
        ("OpenVINO", "%s (PyPI wheel, CPU plugin)" % v.get("openvino", "?")),
        ("PyTorch", "%s (Debian python3-torch), numpy %s, Python %s" % (v.get("torch", "?"), v.get("numpy", "?"),
                                                                        v.get("python", "?"))),
        ("PyTorch's BLAS", "; ".join("%s %s, kernel %s (%s)" % (b["lib"], b["version"], b["kernel"], b["file"])
                                     for b in v.get("torch_blas", [])) or "?"),
        ("OpenBLAS environment", "OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s" % (
            os.environ.get("OPENBLAS_CORETYPE", "(unset)"), os.environ.get("OPENBLAS_L2_SIZE", "(unset)"))),
    ]
    return "\n".join("| %s | %s |" % r for r in [("Item", "Value"), ("---", "---")] + rows)


def fmt_ms(x):
    if x is None:
        return "—"
    return "%.4f" % x if x < 0.1 else "%.3f" % x if x < 10 else "%.1f" % x


def fmt_ratio(x):
    return "—" if x is None else "%.3g" % x if x < 100 else "%.0f" % x


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


PEERS = {"ort": "ORT", "ov": "OpenVINO", "torch": "torch"}


def peer_ms(peers, peer, t, nm, key="median_ms"):
    r = peers.get("results", {}).get(peer, {}).get(str(t), {}).get(nm)
    if not isinstance(r, dict):
        return None, "missing"
    if "error" in r:
        return None, r["error"]
    return r.get(key), r.get("check", "")


def alongside(peers, peer, t, nm):
    """dlcc's result measured alongside the peer (bench/peers.py --dlcc), or None."""
    r = peers.get("results", {}).get(peer, {}).get(str(t), {}).get(nm)
    d = r.get("dlcc") if isinstance(r, dict) else None
    return d if isinstance(d, dict) else None


def paired(peers, peer, t, nm, key="median_ms"):
    """dlcc's time measured alongside the peer, or None."""
    d = alongside(peers, peer, t, nm)
    return d.get(key) if d else None


def dlcc_own(dlcc, nm, t, key="median_ms"):
    """dlcc's back-to-back time (bench/dlcc_bench.py) at t threads, or None."""
    r = dlcc.get(nm, {})
    sfx = "" if t == 1 else "_2t"
    return r.get(key + sfx) if "error" not in r and "error" + sfx not in r else None


def versus(dlcc, peers, peer, t, nm, key="median_ms"):
    """(peer ms, dlcc ms, dlcc / peer) for one peer: dlcc's time alongside that peer, or its own
    back-to-back time when it was not interleaved; None where a side has no valid time (an error, or
    a peer whose output did not match)."""
    pm, chk = peer_ms(peers, peer, t, nm, key)
    if pm is None or not str(chk).startswith("ok"):
        return None, None, None
    d = paired(peers, peer, t, nm, key) or dlcc_own(dlcc, nm, t, key)
    return pm, d, d / pm if d and pm else None


def best_peer(dlcc, peers, nm, t, key="median_ms"):
    """(peer, peer ms, dlcc ms, dlcc / peer) against the fastest peer at t threads whose output
    matched, or Nones."""
    cands = [(p,) + versus(dlcc, peers, p, t, nm, key) for p in PEERS]
    cands = [c for c in cands if c[1] is not None]
    return min(cands, key=lambda c: c[1]) if cands else (None, None, None, None)


def model_names(dlcc):
    """The models of the run in table order, each folded export before its unfolded one."""
    import models as bm
    order = {n: i for i, n in enumerate(bm.MODELS)}
    return sorted(dlcc, key=lambda n: (order.get(bm.base(n)[0], len(order)), bm.base(n)[0], not bm.base(n)[1]))


def family(nm):
    import models as bm
    m = bm.MODELS.get(bm.base(nm)[0])
    return m.family if m else "?"


def summary_stats(dlcc, peers, names, t, key="median_ms"):
    """{form: (geometric mean of dlcc / best peer, (worst ratio, its model), count)} for the folded
    ("fold") and unfolded ("nofold") exports among names."""
    import models as bm
    out = {}
    for form in ("fold", "nofold"):
        rs = [(best_peer(dlcc, peers, nm, t, key)[3], nm) for nm in names if bm.base(nm)[1] == (form == "fold")]
        rs = [r for r in rs if r[0]]
        if rs:
            out[form] = (geomean([r[0] for r in rs]), max(rs), len(rs))
    return out


def stats_sentence(dlcc, peers, names, key="median_ms"):
    parts = []
    for t in (1, 2):
        for form, (g, (w, wn), n) in summary_stats(dlcc, peers, names, t, key).items():
            parts.append("%dT%s: geometric mean %s over %d models, worst %s (%s)" % (
                t, "" if form == "fold" else " (unfolded exports)", fmt_ratio(g), n, fmt_ratio(w), wn))
    return "; ".join(parts) if parts else "no ratios"


def peak_gflops(peak_text):
    """One core's multiply-add peak from peak.txt ("WHEN peak_gflops=G ..." lines): the best, or None."""
    vals = [float(v) for v in re.findall(r"peak_gflops=(\S+)", peak_text or "")]
    return max(vals) if vals else None


def models_section(dlcc, peers, run, peak=None):
    out = []
    names = model_names(dlcc)
    out.append("| Model | Family | Params | MFLOP | dlcc compile s (wall / CPU) | dlcc 1T ms | best peer 1T | "
               "its ms | dlcc/best 1T | dlcc 2T ms | best peer 2T | its ms | dlcc/best 2T | dlcc 1T GFLOPS | "
               "peak floor 1T / 2T |")
    out.append("|---|---|--:|--:|--:|--:|---|--:|--:|--:|---|--:|--:|--:|--:|")
    floors = {1: [], 2: []}
    problems = ["- **%s %dT: the whole peer failed** — %s" % (
                    PEERS[p], t, " / ".join(str(res["error"]).splitlines()[-5:]))
                for p in PEERS for t in (1, 2)
                for res in [peers.get("results", {}).get(p, {}).get(str(t), {})] if isinstance(res.get("error"), str)]
    for nm in names:
        r = dlcc[nm]
        cells = [nm, family(nm), "%d" % r["params"] if r.get("params") is not None else "—",
                 "%.2f" % (r["flops"] / 1e6) if r.get("flops") is not None else "—",
                 "%.2f / %.2f" % (r["compile_s"], r.get("compile_cpu_s", float("nan"))) if "compile_s" in r else "—"]
        if "error" in r:
            problems.append("- **%s: dlcc** — %s" % (nm, " / ".join(r["error"].splitlines())))
        if "error_2t" in r:
            problems.append("- **%s: dlcc --threads 2** — %s" % (nm, " / ".join(r["error_2t"].splitlines())))
        for t in (1, 2):
            peer, pm, d, ratio = best_peer(dlcc, peers, nm, t)
            failed = "error" in r or (t == 2 and "error_2t" in r)
            cells += ["**failed**" if failed else fmt_ms(d if d is not None else dlcc_own(dlcc, nm, t)),
                      PEERS.get(peer, "—"), fmt_ms(pm), fmt_ratio(ratio)]
            for p in PEERS:
                ms, chk = peer_ms(peers, p, t, nm)
                if chk != "missing" and not str(chk).startswith("ok"):
                    problems.append("- **%s: %s %dT** — %s" % (nm, PEERS[p], t, " / ".join(str(chk).splitlines())))
                pd = alongside(peers, p, t, nm)
                if pd and not failed and not str(pd.get("check", "")).startswith("ok"):
                    problems.append("- **%s: dlcc %dT alongside %s** — %s" % (
                        nm, t, PEERS[p], pd.get("error") or pd.get("check")))
        d1 = dlcc_own(dlcc, nm, 1)
        cells.append("%.3f" % (r["flops"] / (d1 * 1e6)) if d1 and r.get("flops") else "—")
        fl = []
        for t in (1, 2):
            pm = best_peer(dlcc, peers, nm, t)[1]
            f = r["flops"] / (t * peak * 1e6) / pm if peak and pm and r.get("flops") else None
            fl.append(fmt_ratio(f) if f else "—")
            if f:
                floors[t].append(f)
        cells.append(" / ".join(fl))
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("**dlcc against the best peer** (per model and thread count, the fastest of ONNX Runtime, OpenVINO "
               "and PyTorch whose output matched): " + stats_sentence(dlcc, peers, names) + ".")
    out.append("")
    if peak and floors[1]:
        out.append("**Peak floor**: the model's MFLOP at one core's multiply-add peak measured in this run (%.1f "
                   "GFLOPS; twice that at 2 threads), divided by the best peer's time: the ratio dlcc would reach "
                   "running every multiply-add of the model at the peak and nothing else. Below it only with fewer "
                   "multiply-adds than `dlcc info` counts (Winograd's 3x3 layers). Geometric mean of the floors: "
                   "%s at 1T, %s at 2T." % (peak, fmt_ratio(geomean(floors[1])),
                                           fmt_ratio(geomean(floors[2])) if floors[2] else "—"))
        out.append("")
    out.append("dlcc 1T is the object compiled with `-O2 --mcpu native`; dlcc 2T the same with `--threads 2` "
               "(parallel loops as two tasks of the Halide runtime's thread pool, linked with the dlcc runtime). "
               "2T ratios divide dlcc's 2T time by the peer's 2T time. Each ratio divides by the peer's time "
               "dlcc's time measured alongside that peer: the peer's runs and dlcc's alternate in rounds "
               "(bench/peers.py --dlcc), so that a change of the machine's speed during the run (a VM sharing "
               "its cores) falls on both sides; the dlcc ms columns are the runs alongside the best peer. "
               "dlcc's own back-to-back runs (bench/dlcc_bench.py) are in BUILD/dlcc.json, and the GFLOPS "
               "column is from them. Times are medians of %d runs after %d warm-up runs; ratios are dlcc time / "
               "peer time (below 1: dlcc faster). MFLOP counts a multiply-add as 2 (`dlcc info`). Names ending in "
               "`-nofold` are the same model exported with do_constant_folding=False." % (
                   run.get("runs", 0), run.get("warmup", 0)))
    out.append("")
    out.append("Each peer (median ms, and dlcc's time alongside it over the peer's):")
    out.append("")
    out.append("| Model | " + " | ".join("%s %dT ms" % (PEERS[p], t) for t in (1, 2) for p in PEERS) + " | " +
               " | ".join("dlcc/%s %dT" % (PEERS[p], t) for t in (1, 2) for p in PEERS) + " |")
    out.append("|---|" + "--:|" * (4 * len(PEERS)))
    ratios = {(p, t): [] for p in PEERS for t in (1, 2)}
    for nm in names:
        ms = [peer_ms(peers, p, t, nm)[0] for t in (1, 2) for p in PEERS]
        rs = []
        for t in (1, 2):
            for p in PEERS:
                rs.append(versus(dlcc, peers, p, t, nm)[2])
                if rs[-1] and not nm.endswith("-nofold"):
                    ratios[p, t].append(rs[-1])
        out.append("| " + " | ".join([nm] + [fmt_ms(x) for x in ms] + [fmt_ratio(x) for x in rs]) + " |")
    out.append("")
    out.append("Geometric means over the folded exports: " + ", ".join(
        "dlcc/%s %dT = %s" % (PEERS[p], t, fmt_ratio(geomean(ratios[p, t]))) for t in (1, 2) for p in PEERS) + ".")
    cfg = {t: (peers.get("results", {}).get("ov", {}).get(str(t), {}).get("_call_overhead") or {}).get("config")
           for t in (1, 2)}
    if any(cfg.values()):
        out.append("")
        out.append("OpenVINO's compiled-model properties as it reported them: " + "; ".join(
            "%dT: %s" % (t, ", ".join("%s=%s" % kv for kv in sorted(c.items()))) for t, c in cfg.items() if c) + ".")
    slow = ["%s %s (%s ms at 1T, %s ms at 2T)" % (PEERS[p], nm, fmt_ms(peer_ms(peers, p, 1, nm)[0]),
                                                fmt_ms(peer_ms(peers, p, 2, nm)[0]))
            for p in PEERS for nm in names
            if peer_ms(peers, p, 1, nm)[0] and (peer_ms(peers, p, 2, nm)[0] or 0) > 2 * peer_ms(peers, p, 1, nm)[0]]
    if slow:
        out.append("")
        out.append("**2-thread times more than twice the 1-thread time** (two threads on two cores that other "
                   "processes also use: a preempted thread stalls the other at every barrier; these 2T cells "
                   "measure the shared machine, not the peer): " + "; ".join(slow) + ".")
    ov = [(p, t, peer_ms(peers, p, t, "_call_overhead")[0]) for p in PEERS for t in (1, 2)]
    out.append("")
    out.append("The peers are timed around their Python call, as a user calls them; one call of an empty model "
               "(Identity on [1,64]) takes (median ms) " + ", ".join(
                   "%s %dT %s" % (PEERS[p], t, fmt_ms(ms)) for p, t, ms in ov) +
               ", which is most of the time of the smallest models. dlcc is timed around the C call.")
    out.append("")
    out.append("The same against the best peer from the minimum of the runs instead of the median (closer to an "
               "unloaded machine when other processes share the CPUs):")
    out.append("")
    out.append("| Model | dlcc 1T min ms | best peer 1T (min) | its min ms | dlcc/best 1T (min) |")
    out.append("|---|--:|---|--:|--:|")
    for nm in names:
        peer, pm, d, ratio = best_peer(dlcc, peers, nm, 1, "min_ms")
        out.append("| %s | %s | %s | %s | %s |" % (nm, fmt_ms(d if d else dlcc_own(dlcc, nm, 1, "min_ms")),
                                                   PEERS.get(peer, "—"), fmt_ms(pm), fmt_ratio(ratio)))
    out.append("")
    out.append("Min-based: " + stats_sentence(dlcc, peers, names, "min_ms") + ".")
    checks = ["%s: %s%s" % (nm, dlcc[nm].get("check"), " (2T: %s)" % dlcc[nm]["check_2t"]
                           if dlcc[nm].get("check_2t") else "") for nm in names]
    out.append("")
    out.append("dlcc output check (rtol 1e-3, atol 1e-4 against PyTorch): " + "; ".join(checks) + ".")
    out.append("")
    if problems:
        out.append("**Failures and mismatches:**")
        out.append("")
        out += problems
    else:
        out.append("Every output of every model and peer matched the reference.")
    rn = dlcc.get("resnet18", {})
    if "compile_s" in rn:
        out.append("")
        out.append("Compile time of ResNet-18 at -O2 (`dlcc`, model.onnx to .o and .h): %.2f s wall, %.2f s CPU "
                   "(the target is at most 1.5 s; with other processes on the CPUs the wall time overstates it)." % (
                       rn["compile_s"], rn.get("compile_cpu_s", float("nan"))))
    return "\n".join(out)


def console_summary(dlcc, peers):
    """The plain-text summary bench/run.sh prints: per model dlcc's time, the best peer's, the ratio."""
    names = model_names(dlcc)
    out = ["%-26s %-11s %5s %10s %-8s %10s %8s   %10s %-8s %10s %8s" % (
        "model", "family", "check", "dlcc 1T", "best 1T", "peer ms", "ratio", "dlcc 2T", "best 2T", "peer ms",
        "ratio")]
    for nm in names:
        r = dlcc[nm]
        row = [nm, family(nm), "ERROR" if "error" in r else "ok" if str(r.get("check")).startswith("ok") else "WRONG"]
        for t in (1, 2):
            peer, pm, d, ratio = best_peer(dlcc, peers, nm, t)
            row += [fmt_ms(d if d else dlcc_own(dlcc, nm, t)), PEERS.get(peer, "—"), fmt_ms(pm), fmt_ratio(ratio)]
        out.append("%-26s %-11s %5s %10s %-8s %10s %8s   %10s %-8s %10s %8s" % tuple(row))
    out.append("dlcc / best peer: " + stats_sentence(dlcc, peers, names))
    bad = [nm for nm in names if "error" in dlcc[nm] or not str(dlcc[nm].get("check")).startswith("ok")]
    if bad:
        out.append("dlcc failed or mismatched on: " + ", ".join(bad) + " (errors in the report)")
    return "\n".join(out)


def gemm_section(text, peak_text):
    """The GEMM table from gemm.txt lines "n=N env=ENV dlcc|blas key=value..." (each env's process
    alternates dlcc's and OpenBLAS's calls) or "n=N compile_s=S", and the peak from peak.txt lines
    "WHEN peak_gflops=G median_gflops=M lanes=L"."""
    rows = {}
    for line in text.splitlines():
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        n = int(kv.pop("n"))
        if "compile_s" in kv:
            rows.setdefault(n, {})["compile_s"] = float(kv["compile_s"])
            continue
        side = re.search(r"\b(dlcc|blas) median_ms=", line)
        if side and "env" in kv:
            rows.setdefault(n, {})[side.group(1) + "-" + kv["env"]] = kv
    peaks = {w.split()[0]: dict(re.findall(r"(\w+)=(\S+)", w)) for w in peak_text.splitlines() if w.strip()}
    peak = max((float(p["peak_gflops"]) for p in peaks.values() if "peak_gflops" in p), default=None)
    out = ["| n (M=N=K) | dlcc ms | dlcc GFLOPS | runs | OpenBLAS, machine env: kernel, ms, GFLOPS | "
           "OpenBLAS, CORETYPE/L2_SIZE unset: kernel, ms, GFLOPS | dlcc / OpenBLAS (machine env; unset) | "
           "dlcc / faster OpenBLAS | dlcc compile (s) |",
           "|--:|--:|--:|--:|---|---|--:|--:|--:|"]
    notes = []
    for n in sorted(rows):
        r = rows[n]
        dl = r.get("dlcc-machine", {})
        cells = [str(n), fmt_ms(float(dl["median_ms"])) if dl else "—",
                 "%s%s" % (dl.get("gflops", "—"), " (%.0f%% of peak)" % (100 * float(dl["gflops"]) / peak)
                           if dl and peak else ""), dl.get("runs", "—")]
        ratios = []
        for env in ("machine", "unset"):
            b, d = r.get("blas-" + env), r.get("dlcc-" + env)
            if not b or not d:
                cells.append("failed (no output)")
                notes.append("- n=%d, %s environment: no result (crash?)" % (n, env))
                continue
            ok = b.get("check") == "ok"
            cells.append("%s, %s, %s%s" % (b.get("kernel"), fmt_ms(float(b["median_ms"])), b["gflops"],
                                           "" if ok else " **WRONG RESULT**"))
            if not ok:
                notes.append("- n=%d, OpenBLAS with %s environment: result check failed (%s)" % (
                    n, env, b.get("max_rel_err")))
            if d.get("check") != "ok":
                notes.append("- n=%d, dlcc (%s environment run): result check failed (%s)" % (
                    n, env, d.get("max_rel_err")))
            if ok and d.get("check") == "ok":
                ratios.append(float(d["median_ms"]) / float(b["median_ms"]))
        cells.append("; ".join(fmt_ratio(x) for x in ratios) or "—")
        cells.append(fmt_ratio(max(ratios)) if ratios else "—")
        cells.append("%.2f" % r["compile_s"] if "compile_s" in r else "—")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("Both sides single-threaded (OPENBLAS_NUM_THREADS=1), same seeded inputs in [-1, 1), C = A·B "
               "with A and B both runtime inputs (dlcc's model is a one-node MatMul of two graph inputs). "
               "Each environment is one process in which dlcc's and OpenBLAS's calls alternate in rounds, and "
               "its ratio is dlcc's median over OpenBLAS's from that process; the last ratio column is the "
               "larger of the two (against the faster OpenBLAS). The dlcc columns are from the machine-env "
               "process. Each result is checked on 256 sampled entries against a double-precision dot "
               "product. dlcc's model is compiled with `--mcpu native`; a side's timed loop stops early "
               "after GEMM_BUDGET seconds, so its run count is given.")
    if peaks:
        out.append("")
        out.append("One core's float32 multiply-add peak (bench/peak.c: independent FMA chains, %s lanes, "
                   "2 flops per lane and FMA), best of five: %s. The %% of peak above is against the "
                   "highest of them." % (
                       next(iter(peaks.values())).get("lanes", "?"),
                       "; ".join("%s %s GFLOPS (median %s)" % (w.replace("_", " "), p.get("peak_gflops"),
                                                                p.get("median_gflops"))
                                 for w, p in peaks.items())))
    if notes:
        out.append("")
        out += notes
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", type=Path, default=HERE / "build")
    ap.add_argument("--dlcc", default=str(HERE / "build" / "dlcc" / "tools" / "dlcc"))
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--summary", action="store_true",
                    help="print the plain-text summary (dlcc against the best peer per model) instead")
    a = ap.parse_args()
    try:
        dlcc = json.loads((a.build / "dlcc.json").read_text())
        peers = json.loads((a.build / "peers.json").read_text())
        run = {} if a.summary else json.loads((a.build / "run.json").read_text())
    except (OSError, ValueError) as e:
        sys.exit("report.py: cannot read the run's results in %s: %s" % (a.build, e))
    if a.summary:
        print(console_summary(dlcc, peers))
        return 0
    gemm = (a.build / "gemm.txt").read_text() if (a.build / "gemm.txt").exists() else ""
    peak = (a.build / "peak.txt").read_text() if (a.build / "peak.txt").exists() else ""
    host = sh("hostname -s")
    print("# dlcc CPU benchmark, %s, host %s" % (run.get("start", "?")[:10], host))
    print()
    print("Produced by `bench/run.sh` (method: docs/performance.md). Run from %s to %s (UTC). "
          "Load average (1/5/15 min) at start %s; before dlcc %s; before the peers %s; before GEMM %s; "
          "at the end %s. A load above the core count means other processes shared the CPUs during the "
          "run, which inflates medians, most of all at 2 threads." % (
              run.get("start"), run.get("end"), run.get("load_start"), run.get("load_dlcc"),
              run.get("load_peers"), run.get("load_gemm"), run.get("load_end")))
    print()
    print("## Machine")
    print()
    print(machine(a, peers, run))
    print()
    print("## Models (batch 1)")
    print()
    import models as bm
    run_models = {bm.base(n)[0] for n in dlcc}
    print("Models: " + "; ".join("`%s` (%s) %s" % (k, v.family, v.desc) for k, v in bm.MODELS.items()
                                 if k in run_models) + ".")
    print()
    print(models_section(dlcc, peers, run, peak_gflops(peak)))
    print()
    print("## GEMM (C = A·B, float32, one thread)")
    print()
    print(gemm_section(gemm, peak) if gemm else "Not run.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
