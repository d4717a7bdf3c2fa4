#!/usr/bin/env python3
"""Runs one end-to-end model through `dlcc run` and compares with PyTorch's outputs.

    run_e2e.py DLCC MODEL_DIR [--backend interp|cpu] [--rtol R] [--atol A]

MODEL_DIR holds model.json (+ model.safetensors), input_K.npy for the K-th graph
input and output_K.npy for the K-th graph output (see export_models.py).  The
outputs `dlcc run` writes (OUTDIR/<sanitized output name>.npy, docs/cli.md)
must match at |out - ref| <= atol + rtol * |ref| everywhere, with the same
shape and dtype.  Exit status: 0 pass, 1 fail.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def file_name(tensor_name):
    """docs/cli.md: characters outside [A-Za-z0-9._-] and a leading '.' become '_'."""
    s = re.sub(r"[^A-Za-z0-9._-]", "_", tensor_name)
    return ("_" + s[1:] if s.startswith(".") else s) + ".npy"


def compare(name, out, ref, rtol, atol):
    """Prints the comparison of one output; returns True when it matches."""
    if out.shape != ref.shape:
        print("FAIL %s: shape %s, expected %s" % (name, list(out.shape), list(ref.shape)))
        return False
    if out.dtype != ref.dtype:
        print("FAIL %s: dtype %s, expected %s" % (name, out.dtype, ref.dtype))
        return False
    o = out.astype(np.float64)
    r = ref.astype(np.float64)
    err = np.abs(o - r)
    rel = err / np.maximum(np.abs(r), np.finfo(np.float32).tiny)
    ok = np.isclose(o, r, rtol=rtol, atol=atol, equal_nan=False)
    bad = int(ok.size - np.count_nonzero(ok))
    max_abs = float(err.max()) if err.size else 0.0      # NaN when any element is NaN
    max_rel = float(rel.max()) if rel.size else 0.0
    nans = int(np.count_nonzero(np.isnan(o)))
    print("%s %s: shape %s, max abs err %.3e, max rel err %.3e, %d of %d elements outside "
          "rtol %g atol %g%s" % ("ok  " if bad == 0 else "FAIL", name, list(out.shape), max_abs, max_rel,
                                 bad, ok.size, rtol, atol, ", %d NaN" % nans if nans else ""))
    if bad:
        idx = np.unravel_index(int(np.argmin(np.where(ok, np.inf, -err))), ok.shape)
        print("     worst at %s: got %.9g, expected %.9g" % (list(map(int, idx)), o[idx], r[idx]))
    return bad == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dlcc", help="path of the dlcc executable")
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--backend", help="passed to `dlcc run --backend`")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()

    model = args.model_dir / "model.json"
    with open(model, encoding="utf-8") as f:
        doc = json.load(f)
    cmd = [args.dlcc, "run", str(model)]
    for k, inp in enumerate(doc["inputs"]):
        cmd += ["-i", "%s=%s" % (inp["name"], args.model_dir / ("input_%d.npy" % k))]
    if args.backend:
        cmd += ["--backend", args.backend]

    with tempfile.TemporaryDirectory(prefix="dlcc-e2e-") as tmp:
        outdir = Path(tmp) / "out"
        cmd += ["-o", str(outdir)]
        print("$ " + " ".join(cmd), flush=True)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print("FAIL: dlcc run did not finish within %g s" % args.timeout)
            return 1
        stdout = p.stdout.decode("utf-8", "replace")
        stderr = p.stderr.decode("utf-8", "replace")
        if stdout:
            sys.stdout.write(stdout)
        if p.returncode != 0:
            print("FAIL: dlcc run exited with status %d; its stderr:" % p.returncode)
            print(stderr.rstrip() or "(empty)")
            return 1
        if stderr:
            sys.stdout.write(stderr)
        passed = True
        for k, o in enumerate(doc["outputs"]):
            path = outdir / file_name(o["name"])
            if not path.is_file():
                present = sorted(x.name for x in outdir.iterdir()) if outdir.is_dir() else []
                print("FAIL %s: dlcc run wrote no %s (OUTDIR has: %s)" % (
                    o["name"], path.name, ", ".join(present) or "nothing"))
                passed = False
                continue
            try:
                out = np.load(path, allow_pickle=False)
            except Exception as e:  # a malformed .npy is a failure of dlcc, reported as such
                print("FAIL %s: cannot read %s: %s" % (o["name"], path.name, e))
                passed = False
                continue
            ref = np.load(args.model_dir / ("output_%d.npy" % k), allow_pickle=False)
            passed &= compare(o["name"], out, ref, args.rtol, args.atol)
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
