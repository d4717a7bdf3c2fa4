#!/usr/bin/env python3
"""Build integration test: dlcc installed into a temporary tree (meson install
--destdir), then used only through what it installs.

    run_cmake_test.py BUILD_DIR SOURCE_ROOT PREFIX

1. CMake: examples/cmake (find_package(dlcc) + dlcc_add_model) configured
   against the installed tree with Ninja and with Unix Makefiles, built, run
   on tests/e2e/mlp's input and compared with its reference output; a second
   build does nothing, and touching the weights file runs dlcc again.  The
   Ninja build compiles the model with --threads 2 (linking the runtime library).
2. -t hetero: tests/cmake/hetero (dlcc_add_model(... DEVICE hetero DEVICES cpu
   gpu fpga OPTIONS --emulate ...)) built against the installed tree, run on
   tests/e2e/cedr's input on StarPU and compared with its reference output
   (skipped when dlcc was built without StarPU).
3. Firmware: examples/firmware built with CMake and its arm-none-eabi
   toolchain file and run on QEMU's mps2-an386 (skipped, with a message,
   when the toolchain or QEMU is absent).
Exit 77 (skip) when cmake is not installed.  pkg-config and Meson builds
against dlcc: tests/integration/.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration"))
from consumer import Mlp, check_close, install, run, run_qemu, script_main  # noqa: E402


def cmake_project(src, build, prefix, mlp, gen, threads=1):
    ok = True
    run(["cmake", "-S", src, "-B", build, "-G", gen, "-DCMAKE_PREFIX_PATH=%s" % prefix,
         "-DDLCC_EXAMPLE_MODEL=%s" % mlp.model, "-DDLCC_EXAMPLE_THREADS=%d" % threads])
    out = run(["cmake", "--build", build])
    if "dlcc: compiling" not in out:
        print("FAIL %s: the first build did not run dlcc\n%s" % (gen, out))
        ok = False
    ok &= mlp.check("%s: classify" % gen, build / "classify")
    again = run(["cmake", "--build", build])
    if "dlcc: compiling" in again:
        print("FAIL %s: a second build ran dlcc again" % gen)
        ok = False
    time.sleep(1.1)   # newer than the outputs, also for one-second file times
    mlp.weights.touch()
    third = run(["cmake", "--build", build])
    if "dlcc: compiling" not in third:
        print("FAIL %s: touching the weights file did not run dlcc again\n%s" % (gen, third))
        ok = False
    else:
        print("ok   %s: rebuilt after the weights changed, not otherwise" % gen)
    return ok


def main():
    build_dir, root, prefix = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    if not shutil.which("cmake"):
        print("SKIP: cmake not found")
        return 77
    ok = True
    with tempfile.TemporaryDirectory(prefix="dlcc-cmake-") as tmp:
        tmp = Path(tmp)
        inst = install(build_dir, prefix, tmp)[1]
        for f in ["bin/dlcc", "share/cmake/dlcc/dlccConfig.cmake", "share/cmake/dlcc/dlccConfigVersion.cmake",
                  "share/cmake/dlcc/dlccModel.cmake", "include/dlcc/runtime.h", "include/dlcc/dlcc_abi.h"]:
            if not (inst / f).exists():
                print("FAIL: %s was not installed" % f)
                ok = False
        mlp = Mlp(root, tmp)

        gens = ["Unix Makefiles"] + (["Ninja"] if shutil.which("ninja") else [])
        for k, gen in enumerate(gens):
            # the Ninja build also asks for --threads 2: the model then links dlcc::runtime_library
            ok &= cmake_project(root / "examples" / "cmake", tmp / ("build-" + gen.replace(" ", "_")), inst,
                                mlp, gen, threads=2 if k == 1 else 1)

        # -t hetero: DEVICE hetero DEVICES cpu gpu fpga, emulated, run on StarPU (the CEDR network)
        if (inst / "include" / "dlcc" / "dlcc_hetero.h").exists():
            cedr = root / "tests" / "e2e" / "cedr"
            hb = tmp / "build-hetero"
            os.environ["STARPU_HOME"] = str(tmp)            # StarPU's calibration files: not in $HOME
            os.environ["STARPU_SILENT"] = "1"
            run(["cmake", "-S", root / "tests" / "cmake" / "hetero", "-B", hb, "-DCMAKE_PREFIX_PATH=%s" % inst,
                 "-DDLCC_HETERO_MODEL=%s" % (cedr / "model.json"),
                 "-DDLCC_HETERO_DEVICE_FILE=%s" % (root / "tests" / "hetero" / "spread.json")])
            run(["cmake", "--build", hb])
            np.load(cedr / "input_0.npy").astype(np.float32).tofile(tmp / "cedr.bin")
            out = run([hb / "run_net", tmp / "cedr.bin"])
            got = np.array([float(v) for v in out.split()], np.float32)
            ok &= check_close("DEVICE hetero DEVICES cpu gpu fpga (emulated, StarPU)", got,
                              np.load(cedr / "output_0.npy").ravel())
        else:
            print("SKIP DEVICE hetero: dlcc was built without its heterogeneous runtime (StarPU)")

        # a find_package version request the package must refuse
        bad = tmp / "badver"
        bad.mkdir()
        (bad / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.20)\nproject(v C)\n"
                                            "find_package(dlcc 7.0 REQUIRED)\n")
        p = subprocess.run(["cmake", "-S", bad, "-B", bad / "b", "-DCMAKE_PREFIX_PATH=%s" % inst],
                           capture_output=True, text=True)
        if p.returncode == 0 or "dlcc" not in p.stderr:
            print("FAIL: find_package(dlcc 7.0) was accepted")
            ok = False
        else:
            print("ok   find_package(dlcc 7.0) refused")

        # firmware through CMake and the toolchain file
        missing = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm") if not shutil.which(t)]
        if missing:
            print("SKIP firmware example: %s not found" % ", ".join(missing))
        else:
            fw = root / "examples" / "firmware"
            fwb = tmp / "build-fw"
            run(["cmake", "-S", fw, "-B", fwb, "-DCMAKE_TOOLCHAIN_FILE=%s" % (fw / "arm-none-eabi.cmake"),
                 "-DCMAKE_PREFIX_PATH=%s" % inst])
            run(["cmake", "--build", fwb])
            out = run_qemu(fwb / "firmware.elf", done="class ")
            # the same ramp input through the reference interpreter
            dscnn = root / "tests" / "e2e" / "dscnn"
            shape = np.load(dscnn / "input_0.npy").shape
            ramp = ((np.arange(int(np.prod(shape))) % 97) / np.float32(97) - np.float32(0.5)).astype(np.float32)
            np.save(tmp / "ramp.npy", ramp.reshape(shape))
            run([inst / "bin" / "dlcc", "run", dscnn / "model.json", "-i", "input=%s" % (tmp / "ramp.npy"),
                 "-o", tmp / "ramp_out"])
            want = np.load(tmp / "ramp_out" / "output.npy").ravel()
            got = np.array([float(l.split("=")[1]) for l in out.splitlines() if l.startswith("y[")], np.float32)
            ok &= check_close("firmware example on mps2-an386 (%s)" % out.strip().splitlines()[-1], got, want)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    script_main(main)
