#!/usr/bin/python3
"""Writes the Markdown results of one bench/run.sh run to stdout.

    bench/report.py --build bench/build --dlcc DLCC --cc CC

Reads BUILD/run.json (times, load averages, run counts), BUILD/dlcc.json (bench/dlcc_bench.py),
BUILD/peers.json (bench/peers.py), BUILD/gemm.txt (bench/gemm.c lines) and BUILD/peak.txt
(bench/peak.c lines), and describes the
machine (lscpu, /proc/meminfo, compiler, LLVM, library versions).
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


def peer_ms(peers, peer, t, nm):
    r = peers.get("results", {}).get(peer, {}).get(str(t), {}).get(nm)
    if not isinstance(r, dict):
        return None, "missing"
    return r.get("median_ms"), r.get("check", "")


def alongside(peers, peer, t, nm):
    """dlcc's result measured alongside the peer (bench/peers.py --dlcc), or None."""
    r = peers.get("results", {}).get(peer, {}).get(str(t), {}).get(nm)
    d = r.get("dlcc") if isinstance(r, dict) else None
    return d if isinstance(d, dict) else None


def paired(peers, peer, t, nm, key="median_ms"):
    """dlcc's time measured alongside the peer, or None."""
    d = alongside(peers, peer, t, nm)
    return d.get(key) if d else None


def models_section(dlcc, peers, run):
    import models as bm
    out = []
    names = [n for n in bm.MODELS if n in dlcc] + sorted(set(dlcc) - set(bm.MODELS))
    out.append("| Model | Params | MFLOP | dlcc compile s (wall / CPU) | dlcc 1T ms | dlcc 2T ms | ORT 1T ms | ORT 2T ms | "
               "torch 1T ms | torch 2T ms | dlcc/ORT 1T | dlcc/torch 1T | dlcc/ORT 2T | dlcc/torch 2T | dlcc 1T GFLOPS |")
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    problems, ratios = [], {"ort": [], "torch": []}
    for nm in names:
        r = dlcc[nm]
        d = r.get("median_ms") if "error" not in r else None
        d2 = r.get("median_ms_2t") if "error_2t" not in r else None
        # dlcc's times alongside ORT when the peers were interleaved with it (the ratios' numerators)
        d = paired(peers, "ort", 1, nm) or d
        d2 = paired(peers, "ort", 2, nm) or d2
        cells = [nm, "%d" % r["params"] if r.get("params") is not None else "—",
                 "%.2f" % (r["flops"] / 1e6) if r.get("flops") is not None else "—",
                 "%.2f / %.2f" % (r["compile_s"], r.get("compile_cpu_s", float("nan"))) if "compile_s" in r else "—",
                 fmt_ms(d) if d is not None else "**failed**"]
        cells.append(fmt_ms(d2) if d2 is not None else "**failed**" if "error_2t" in r else "—")
        if "error" in r:
            problems.append("- **%s: dlcc** — %s" % (nm, " / ".join(r["error"].splitlines())))
        if "error_2t" in r:
            problems.append("- **%s: dlcc --threads 2** — %s" % (nm, " / ".join(r["error_2t"].splitlines())))
        pm = {}
        for peer in ("ort", "torch"):
            for t in (1, 2):
                ms, chk = peer_ms(peers, peer, t, nm)
                pm[peer, t] = ms
                if not chk.startswith("ok"):
                    problems.append("- **%s: %s %dT** — %s" % (nm, peer, t, chk))
                pd = alongside(peers, peer, t, nm)
                if pd and not str(pd.get("check", "")).startswith("ok"):
                    problems.append("- **%s: dlcc %dT alongside %s** — %s" % (
                        nm, t, peer, pd.get("error") or pd.get("check")))
        cells += [fmt_ms(pm["ort", 1]), fmt_ms(pm["ort", 2]), fmt_ms(pm["torch", 1]), fmt_ms(pm["torch", 2])]
        for t in (1, 2):
            for peer in ("ort", "torch"):
                dt = paired(peers, peer, t, nm) or (d if t == 1 else d2)
                ratio = dt / pm[peer, t] if dt is not None and pm[peer, t] else None
                if t == 1 and ratio:
                    ratios[peer].append(ratio)
                cells.append(fmt_ratio(ratio))
        cells.append("%.3f" % (r["flops"] / (d * 1e6)) if d and r.get("flops") else "—")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("dlcc 1T is the object compiled with `-O2 --mcpu native`; dlcc 2T the same with `--threads 2` "
               "(parallel loops as two tasks of the Halide runtime's thread pool, linked with the dlcc runtime). "
               "2T ratios divide dlcc's 2T time by the peer's 2T time.")
    if any(paired(peers, p, t, nm) for p in ("ort", "torch") for t in (1, 2) for nm in names):
        out.append("Each ratio divides by the peer's time dlcc's time measured alongside it: the peer's runs and "
                   "dlcc's alternate in rounds (bench/peers.py --dlcc), so that a change of the machine's speed "
                   "during the run (a VM sharing its cores) falls on both sides; the dlcc ms columns are the "
                   "runs alongside ONNX Runtime. dlcc's own back-to-back runs (bench/dlcc_bench.py) are in "
                   "BUILD/dlcc.json.")
    out.append("Times are medians of %d runs after %d warm-up runs; ratios are dlcc time / peer time "
               "(below 1: dlcc faster). MFLOP counts a multiply-add as 2 (`dlcc info`). "
               "Geometric mean over the models: dlcc/ORT 1T = %s, dlcc/torch 1T = %s." % (
                   run.get("runs", 0), run.get("warmup", 0), fmt_ratio(geomean(ratios["ort"])),
                   fmt_ratio(geomean(ratios["torch"]))))
    slow = ["%s %s (%s ms at 1T, %s ms at 2T)" % (peer, nm, fmt_ms(peer_ms(peers, peer, 1, nm)[0]),
                                                fmt_ms(peer_ms(peers, peer, 2, nm)[0]))
            for peer in ("ort", "torch") for nm in names
            if peer_ms(peers, peer, 1, nm)[0] and (peer_ms(peers, peer, 2, nm)[0] or 0) > 2 * peer_ms(peers, peer, 1, nm)[0]]
    if slow:
        out.append("")
        out.append("**2-thread times more than twice the 1-thread time** (two threads on two cores that other "
                   "processes also use: a preempted thread stalls the other at every barrier; these 2T cells "
                   "measure the shared machine, not the peer): " + "; ".join(slow) + ".")
    ov = [(peer, t, peer_ms(peers, peer, t, "_call_overhead")[0]) for peer in ("ort", "torch") for t in (1, 2)]
    out.append("")
    out.append("The peers are timed around their Python call, as a user calls them; one call of an empty model "
               "(Identity on [1,64]) takes (median ms) " + ", ".join(
                   "%s %dT %s" % (p, t, fmt_ms(ms)) for p, t, ms in ov) +
               ", which is most of the time of the smallest models. dlcc is timed around the C call.")
    out.append("")
    out.append("The same ratios from the minimum of the runs instead of the median (closer to an unloaded "
               "machine when other processes share the CPUs):")
    out.append("")
    out.append("| Model | dlcc min ms | ORT 1T min ms | torch 1T min ms | dlcc/ORT 1T (min) | dlcc/torch 1T (min) |")
    out.append("|---|--:|--:|--:|--:|--:|")
    mins = {"ort": [], "torch": []}
    for nm in names:
        d0 = dlcc[nm].get("min_ms") if "error" not in dlcc[nm] else None
        cells = [nm, fmt_ms(paired(peers, "ort", 1, nm, "min_ms") or d0)]
        rs = []
        for peer in ("ort", "torch"):
            r = peers.get("results", {}).get(peer, {}).get("1", {}).get(nm)
            pm = r.get("min_ms") if isinstance(r, dict) else None
            d = paired(peers, peer, 1, nm, "min_ms") or d0
            cells.append(fmt_ms(pm))
            rs.append(d / pm if d and pm else None)
            if rs[-1]:
                mins[peer].append(rs[-1])
        out.append("| " + " | ".join(cells + [fmt_ratio(x) for x in rs]) + " |")
    out.append("")
    out.append("Geometric mean of the min-based ratios: dlcc/ORT 1T = %s, dlcc/torch 1T = %s." % (
        fmt_ratio(geomean(mins["ort"])), fmt_ratio(geomean(mins["torch"]))))
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
                   "(the target is at most 2 s; with other processes on the CPUs the wall time overstates it)." % (
                       rn["compile_s"], rn.get("compile_cpu_s", float("nan"))))
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
    a = ap.parse_args()
    run = json.loads((a.build / "run.json").read_text())
    dlcc = json.loads((a.build / "dlcc.json").read_text())
    peers = json.loads((a.build / "peers.json").read_text())
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
    print("Models: " + "; ".join("`%s` %s" % (k, v[3]) for k, v in bm.MODELS.items()) + ".")
    print()
    print(models_section(dlcc, peers, run))
    print()
    print("## GEMM (C = A·B, float32, one thread)")
    print()
    print(gemm_section(gemm, peak) if gemm else "Not run.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
