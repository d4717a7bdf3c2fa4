#!/usr/bin/env python3
"""Reproducible outputs: runs `dlcc MODEL -o DIR` (compile: NAME.o, NAME.h,
NAME.report.json), `dlcc convert` and `dlcc run` twice on each model, in two
different settings, and checks that every file written is byte-identical.

    run_reproducible.py DLCC [--other-dlcc DLCC2] MODEL_DIR...

MODEL_DIR holds model.json (+ model.safetensors) and input_K.npy for the
K-th graph input (tests/e2e layout).  The two settings differ in everything
that must not matter:
  - the model's folder (a copy at another path, given relatively once and
    absolutely once),
  - the output folder (relative vs absolute, different names and depths),
  - the working directory,
  - the locale: LC_ALL=C vs a locale with a decimal comma (de_DE.UTF-8,
    generated with localedef into a scratch LOCPATH when possible, else
    C.UTF-8), and TZ,
  - with --other-dlcc, the dlcc executable (e.g. another build folder).
Exit status 0 when every file matches, 1 otherwise.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile


def other_locale(tmp):
    """(environment additions, description) for a non-C locale."""
    loc = os.path.join(tmp, "locales")
    os.mkdir(loc)
    try:
        p = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", os.path.join(loc, "de_DE.UTF-8")],
                           capture_output=True, timeout=60)
        if p.returncode in (0, 1) and os.path.isdir(os.path.join(loc, "de_DE.UTF-8")):
            return {"LOCPATH": loc, "LC_ALL": "de_DE.UTF-8", "LANG": "de_DE.UTF-8"}, "de_DE.UTF-8"
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}, "C.UTF-8"


def digests(folder):
    """{relative path: sha256} of every file under folder."""
    out = {}
    for dirpath, _, files in os.walk(folder):
        for f in files:
            path = os.path.join(dirpath, f)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, folder)] = hashlib.sha256(fh.read()).hexdigest()
    return out


class Setting:
    def __init__(self, tmp, tag, model_dir, dlcc, env, model_rel, out_rel):
        self.root = os.path.join(tmp, tag)
        self.cwd = os.path.join(self.root, "cwd", "deeper") if model_rel is False else os.path.join(self.root, "cwd")
        os.makedirs(self.cwd)
        self.model_folder = os.path.join(self.root, "models-" + tag, os.path.basename(model_dir.rstrip("/")))
        shutil.copytree(model_dir, self.model_folder)
        self.model_arg = (os.path.relpath(self.model_folder, self.cwd) if model_rel else self.model_folder)
        self.out_root = os.path.join(self.root, "outputs-of-" + tag)
        os.makedirs(self.out_root)
        self.out_rel = out_rel
        self.dlcc = dlcc
        self.env = env

    def out(self, what):
        path = os.path.join(self.out_root, what)
        return os.path.relpath(path, self.cwd) if self.out_rel else path

    def run(self, args):
        p = subprocess.run([self.dlcc] + args, cwd=self.cwd, env=self.env, capture_output=True, timeout=600)
        if p.returncode != 0:
            raise RuntimeError("dlcc %s failed (%d): %s" % (" ".join(args), p.returncode,
                                                            p.stderr.decode("utf-8", "replace").strip()))


def commands(s, model_dir):
    """(label, output folder, dlcc arguments) of the commands compared."""
    model = os.path.join(s.model_arg, "model.json")
    with open(os.path.join(model_dir, "model.json"), encoding="utf-8") as f:
        names = [i["name"] for i in json.load(f)["inputs"]]
    inputs = []
    for k, n in enumerate(names):
        inputs += ["-i", "%s=%s" % (n, os.path.join(s.model_arg, "input_%d.npy" % k))]
    return [
        ("compile", "compile", [model, "-o", s.out("compile")]),
        ("compile -O0 --emit obj,header,report,llvm,asm", "compile-all",
         [model, "-O0", "--emit", "obj,header,report,llvm,asm", "-o", s.out("compile-all")]),
        ("convert", "convert", ["convert", model, "-o", os.path.join(s.out("convert"), "converted.json")]),
        ("run", "run", ["run", model] + inputs + ["-o", s.out("run")]),
    ]


def check_model(dlcc, other, model_dir, tmp, loc_env, loc_name):
    base = {k: v for k, v in os.environ.items() if not k.startswith("LC_") and k not in ("LANG", "LOCPATH", "TZ")}
    a = Setting(tmp, "a", model_dir, dlcc, dict(base, LC_ALL="C", TZ="UTC"), True, True)
    b = Setting(tmp, "second-setting", model_dir, other or dlcc, dict(base, TZ="Asia/Kolkata", **loc_env),
                False, False)
    failed = 0
    for (label, folder, args_a), (_, _, args_b) in zip(commands(a, model_dir), commands(b, model_dir)):
        try:
            if label == "convert":  # convert writes into an existing folder
                os.mkdir(os.path.join(a.out_root, folder))
                os.mkdir(os.path.join(b.out_root, folder))
            a.run(args_a)
            b.run(args_b)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print("FAIL %s %s: %s" % (os.path.basename(model_dir), label, e))
            failed += 1
            continue
        da = digests(os.path.join(a.out_root, folder))
        db = digests(os.path.join(b.out_root, folder))
        if not da:
            print("FAIL %s %s: wrote no files" % (os.path.basename(model_dir), label))
            failed += 1
        elif da != db:
            diff = sorted(k for k in set(da) | set(db) if da.get(k) != db.get(k))
            print("FAIL %s %s: files differ between the settings: %s" % (os.path.basename(model_dir), label, diff))
            failed += 1
        else:
            print("ok   %s %s: %d files identical (%s)" % (os.path.basename(model_dir), label, len(da),
                                                           ", ".join(sorted(da))))
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dlcc")
    ap.add_argument("--other-dlcc", help="a second dlcc executable for the second setting")
    ap.add_argument("model_dirs", nargs="+")
    args = ap.parse_args()
    dlcc = os.path.abspath(args.dlcc)
    other = os.path.abspath(args.other_dlcc) if args.other_dlcc else None
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        loc_env, loc_name = other_locale(tmp)
        print("settings: LC_ALL=C TZ=UTC vs LC_ALL=%s TZ=Asia/Kolkata%s" %
              (loc_name, ", dlcc %s vs %s" % (dlcc, other) if other else ""))
        for i, m in enumerate(args.model_dirs):
            sub = os.path.join(tmp, "m%d" % i)
            os.mkdir(sub)
            failed += check_model(dlcc, other, os.path.abspath(m), sub, loc_env, loc_name)
    print("%s: %d command(s) not reproducible" % ("FAIL" if failed else "ok", failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
