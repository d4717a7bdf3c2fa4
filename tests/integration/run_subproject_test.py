#!/usr/bin/env python3
"""dlcc as a Meson subproject (docs/build-integration.md, "Meson").

    run_subproject_test.py SOURCE_ROOT [--runtime-library]

A fresh consumer project in a temporary folder gets this source tree as
subprojects/dlcc (a symbolic link) and, as the document shows,

    subproject('dlcc', default_options : ['tests=false'])
    dlcc = find_program('dlcc')            # the overridden one, built first
    custom_target(... command : [dlcc, ...]) -> mlp.o, mlp.h
    executable('classify', 'main.c', mlp, dependencies : dependency('dlcc-runtime'))

with examples/cmake/main.c (which includes <dlcc/runtime.h> and "mlp.h").
Checks: Meson reports dlcc and dlcc-runtime as overridden; classify's outputs
match tests/e2e/mlp's PyTorch output; a second build does nothing and
touching the weights runs dlcc again (its depfile).  --runtime-library (the
GPU runtime is built here): a second executable, from the model compiled with
`-t gpu`, links only if dependency('dlcc-runtime') carries libdlcc_runtime.a
(dlcc_gpu_run) and its libraries; without an NVIDIA device it reports
mlp_ERR_DEVICE (tests/integration/consumer.py).

The consumer build compiles dlcc itself (Meson cannot reuse another build
folder's targets), with as many jobs as MESON_TESTTHREADS says, else one per
CPU; buildtype=plain (no -O, no -g) keeps that compilation short.
Exit 77 (skip) when meson or ninja is not on PATH.
"""

import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from consumer import Mlp, run, script_main


def main():
    root = Path(sys.argv[1]).resolve()
    with_library = "--runtime-library" in sys.argv[2:]
    missing = [t for t in ("meson", "ninja") if not shutil.which(t)]
    if missing:
        print("SKIP: %s not found" % ", ".join(missing))
        return 77
    jobs = os.environ.get("MESON_TESTTHREADS") or str(os.cpu_count() or 1)
    ok = True
    with tempfile.TemporaryDirectory(prefix="dlcc-subproject-") as tmp:
        proj = Path(tmp) / "consumer"
        (proj / "subprojects").mkdir(parents=True)
        (proj / "subprojects" / "dlcc").symlink_to(root, target_is_directory=True)
        mlp = Mlp(root, proj)
        devices = ["cpu"] + (["gpu"] if with_library else [])
        mlp.meson_project(proj, devices, subproject=True)

        build = proj / "build"
        t0 = time.monotonic()
        setup = run(["meson", "setup", build, proj, "--buildtype=plain"])
        for what in ("Program dlcc", "Dependency dlcc-runtime"):
            if not re.search(r"^%s found: YES .*\(overridden\)$" % what, setup, re.M):
                print("FAIL: meson setup did not find %s overridden by the subproject\n%s" % (what, setup))
                ok = False
        run(["ninja", "-C", build, "-j", jobs])
        print("consumer configured and built (dlcc included) in %.0f s with %s jobs" % (time.monotonic() - t0, jobs))
        ok &= mlp.check_devices("subproject build", devices, lambda device: build / device)

        if "no work to do" not in run(["ninja", "-C", build]):
            print("FAIL: a second build was not empty")
            ok = False
        time.sleep(1.1)   # newer than the outputs, also for one-second file times
        mlp.weights.touch()
        again = run(["ninja", "-C", build])
        if again.count("Generating cpu/mlp") != 1:
            print("FAIL: touching the weights did not run dlcc again (once)\n%s" % again)
            ok = False
        else:
            print("ok   the model was compiled again after its weights changed, not otherwise")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    script_main(main)
