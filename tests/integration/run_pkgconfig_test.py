#!/usr/bin/env python3
"""pkg-config from an installed tree (docs/build-integration.md, "pkg-config").

    run_pkgconfig_test.py BUILD_DIR SOURCE_ROOT PREFIX LIBDIR [--runtime-library]

BUILD_DIR is installed with `meson install --destdir` into a temporary folder;
dlcc-runtime.pc must then be in PREFIX/LIBDIR/pkgconfig (the PKG_CONFIG_PATH
the document gives; LIBDIR is lib/x86_64-linux-gnu on Debian).  Its prefix is
the configured PREFIX, not the destdir, so the test sets PKG_CONFIG_SYSROOT_DIR
to the destdir as the document tells a user of a staged tree to do.  With the
installed dlcc the MLP of tests/e2e/mlp is compiled, linked with
examples/cmake/main.c by `cc ... $(pkg-config --cflags --libs dlcc-runtime)`,
run, and compared with its PyTorch output.  --runtime-library (the build has
libdlcc_runtime.a): the same with `-t gpu`, whose host object calls the
library's dlcc_gpu_run, so it links only if the .pc's Libs carry the library;
without an NVIDIA device classify reports mlp_ERR_DEVICE (tests/integration/consumer.py).
The same program is then built by a Meson project that finds dlcc on PATH
and dlcc-runtime through pkg-config (docs/build-integration.md, "Meson").
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

from consumer import Mlp, install, run, script_main


def main():
    build_dir, root, prefix, libdir = sys.argv[1:5]
    with_library = "--runtime-library" in sys.argv[5:]
    if not shutil.which("pkg-config"):
        print("SKIP: pkg-config not found")
        return 77
    ok = True
    with tempfile.TemporaryDirectory(prefix="dlcc-pkgconfig-") as tmp:
        tmp = Path(tmp)
        dest, inst = install(build_dir, prefix, tmp)
        pcdir = dest / (Path(prefix) / libdir).relative_to("/") / "pkgconfig"
        if not (pcdir / "dlcc-runtime.pc").exists():
            print("FAIL: no dlcc-runtime.pc in %s" % pcdir)
            return 1
        env = dict(os.environ, PKG_CONFIG_PATH=str(pcdir), PKG_CONFIG_SYSROOT_DIR=str(dest))
        flags = run(["pkg-config", "--cflags", "--libs", "dlcc-runtime"], env=env).split()
        print("pkg-config --cflags --libs dlcc-runtime: %s" % " ".join(flags))
        want = ["-I%s" % (inst / "include"), "-lm"] + (["-ldlcc_runtime"] if with_library else [])
        missing = [f for f in want if f not in flags]
        if missing:
            print("FAIL: the flags lack %s" % " ".join(missing))
            ok = False
        mlp = Mlp(root, tmp)
        cc = os.environ.get("CC", "cc")
        devices = ["cpu"] + (["gpu"] if with_library else [])
        for device in devices:
            gen = tmp / "cc" / device
            gen.parent.mkdir(exist_ok=True)
            run([inst / "bin" / "dlcc", mlp.model, "-t", device, "-o", gen, "--name", "mlp"])
            run([cc, "-std=c11", "-Wall", "-Werror", "-I", gen, mlp.main_c, gen / "mlp.o", "-o", gen / "classify"]
                + flags)
        ok &= mlp.check_devices("cc with pkg-config", devices, lambda device: tmp / "cc" / device)

        # Meson against the installed tree: dlcc on PATH, dlcc-runtime through pkg-config
        if shutil.which("meson") and shutil.which("ninja"):
            proj = tmp / "meson"
            mlp.meson_project(proj, devices, subproject=False)
            env["PATH"] = "%s%s%s" % (inst / "bin", os.pathsep, env.get("PATH", ""))
            setup = run(["meson", "setup", proj / "build", proj], env=env)
            found = "Program dlcc found: YES (%s)" % (inst / "bin" / "dlcc")
            if found not in setup:
                print("FAIL: meson setup did not say '%s'\n%s" % (found, setup))
                ok = False
            run(["ninja", "-C", proj / "build"], env=env)
            ok &= mlp.check_devices("Meson with pkg-config", devices, lambda device: proj / "build" / device)
        else:
            print("SKIP Meson build: meson or ninja not found")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    script_main(main)
