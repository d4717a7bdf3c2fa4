#!/usr/bin/env python3
"""Bad-input suite: runs dlcc on every case in tests/errors/cases/ and checks
its exit status, its diagnostic, its time and memory, and that it wrote
nothing into the output folder.

A case is a file CASE.expect beside its inputs, with lines:
    args: run {dir}/bad.json -i x={dir}/x.npy      (dlcc arguments; {dir} is the case folder,
                                                     {out} a fresh empty output folder)
    exit: 1                                         (expected exit status; default 1)
    stderr: <substring the one-line diagnostic must contain>
Optional lines:
    setup: symlink NAME TARGET   creates a symbolic link in the scratch copy of
                                 the case folder ({tmp}: the scratch folder;
                                 links are not committed to git)
    setup: file NAME             puts an older output file {out}/NAME there first;
                                 it must be left untouched (content and mtime)
    stdout: TEXT                 stdout must contain TEXT
    expect-file: NAME            a positive case (exit: 0): {out}/NAME must be
                                 written; nothing else may appear in {out}
    absent: PATH                 PATH ({out}, {dir} substituted) must not exist
                                 after the run (e.g. an escape from {out})
"""
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

TIME_LIMIT_S = 1.0
MEM_LIMIT = 256 << 20


def parse(path):
    spec = {"exit": "1", "stderr": [], "stdout": [], "setup": [], "expect-file": [], "absent": []}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            key, _, val = line.partition(":")
            val = val.strip()
            if key in ("stderr", "stdout", "setup", "expect-file", "absent"):
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
        old = {}
        for s in spec["setup"]:
            parts = s.split()
            if parts[0] == "symlink":
                os.symlink(parts[2].replace("{tmp}", tmp), os.path.join(work, parts[1]))
            elif parts[0] == "file":
                path = os.path.join(out, parts[1])
                with open(path, "w", encoding="utf-8") as f:
                    f.write("an older %s that a failed command must not touch\n" % parts[1])
                os.utime(path, (1000000000, 1000000000))
                old[parts[1]] = os.stat(path)
            else:
                return "unknown setup %r" % s
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
        outtext = p.stdout.decode("utf-8", "replace")
        for want in spec["stdout"]:
            if want not in outtext:
                problems.append("stdout lacks %r" % want)
        if p.returncode in (0, 1, 2) and p.returncode != 0:
            lines = [l for l in err.splitlines() if l.strip()]
            if not lines or not re.match(r"dlcc: (\S.*: )?error: \S", lines[0]):
                problems.append("diagnostic is not 'dlcc: ...: error: ...'")
        if p.returncode < 0 or p.returncode > 2:
            problems.append("crashed (status %d)" % p.returncode)
        left = set(os.listdir(out)) - set(old)
        for name in spec["expect-file"]:
            if name not in left:
                problems.append("did not write %s into the output folder" % name)
            left.discard(name)
        if left:
            problems.append("left files in the output folder: %s" % sorted(left))
        for name, st in old.items():
            path = os.path.join(out, name)
            now = os.stat(path) if os.path.lexists(path) else None
            if not now or now.st_mtime != st.st_mtime or now.st_size != st.st_size or now.st_ino != st.st_ino:
                problems.append("changed the older output file %s" % name)
        for a in spec["absent"]:
            path = a.replace("{dir}", work).replace("{out}", out)
            if os.path.lexists(path):
                problems.append("wrote %s" % a)
                if not os.path.isdir(path):
                    os.unlink(path)
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
