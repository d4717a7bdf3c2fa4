#!/usr/bin/env python3
"""Bad-input suite: runs dlcc on every case in tests/errors/cases/ and checks
its exit status, its diagnostic, its time and memory, and that it wrote
nothing into the output folder.

A case is a file CASE.expect beside its inputs, with lines:
    args: run {dir}/bad.json -i x={dir}/x.npy      (dlcc arguments; {dir} is the case folder,
                                                     {out} a fresh empty output folder)
    exit: 1                                         (expected exit status; default 1)
    stderr: <substring the one-line diagnostic must contain>
An optional 'setup: symlink NAME TARGET' line creates a symbolic link in a
scratch copy of the case folder first (links are not committed to git).
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

TIME_LIMIT_S = 1.0
MEM_LIMIT = 256 << 20


def parse(path):
    spec = {"exit": "1", "stderr": [], "setup": []}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            key, _, val = line.partition(":")
            val = val.strip()
            if key in ("stderr", "setup"):
                spec[key].append(val)
            else:
                spec[key] = val
    return spec


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


def run_case(dlcc, case_dir, name, sanitized):
    spec = parse(os.path.join(case_dir, name + ".expect"))
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "case")
        shutil.copytree(case_dir, work, symlinks=True)
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        for s in spec["setup"]:
            parts = s.split()
            if parts[0] == "symlink":
                os.symlink(parts[2].replace("{tmp}", tmp), os.path.join(work, parts[1]))
        args = [a.replace("{dir}", work).replace("{out}", out) for a in spec["args"].split()]
        start = time.monotonic()
        try:
            p = subprocess.run([dlcc] + args, capture_output=True, timeout=10,
                               preexec_fn=None if sanitized else limit_memory)
        except subprocess.TimeoutExpired:
            return "timed out (> 10 s)"
        elapsed = time.monotonic() - start
        err = p.stderr.decode("utf-8", "replace")
        problems = []
        if str(p.returncode) != spec["exit"]:
            problems.append("exit %d, expected %s" % (p.returncode, spec["exit"]))
        for want in spec["stderr"]:
            want = want.replace("{dir}", work).replace("{out}", out)
            if want not in err:
                problems.append("diagnostic lacks %r" % want)
        if p.returncode in (0, 1, 2) and p.returncode != 0:
            lines = [l for l in err.splitlines() if l.strip()]
            if not lines or not lines[0].startswith("dlcc: "):
                problems.append("diagnostic is not 'dlcc: ...: error: ...'")
        if p.returncode < 0 or p.returncode > 2:
            problems.append("crashed (status %d)" % p.returncode)
        if os.listdir(out):
            problems.append("left files in the output folder: %s" % os.listdir(out))
        if not sanitized and elapsed > TIME_LIMIT_S:
            problems.append("took %.2f s (limit %.1f s)" % (elapsed, TIME_LIMIT_S))
        if problems:
            return "; ".join(problems) + "\n    stderr: " + err.strip()[:400]
    return None


def main():
    dlcc, root = sys.argv[1], sys.argv[2]
    sanitized = os.environ.get("DLCC_SANITIZED") == "1"
    passed = failed = 0
    for dirpath, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if not f.endswith(".expect"):
                continue
            name = f[:-len(".expect")]
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            msg = run_case(dlcc, dirpath, name, sanitized)
            if msg:
                failed += 1
                print("FAIL %s: %s" % (rel, msg))
            else:
                passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
