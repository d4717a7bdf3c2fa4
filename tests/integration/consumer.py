"""What the build-integration tests share (docs/build-integration.md):
dlcc installed into a temporary tree, the MLP of tests/e2e/mlp as the model,
and examples/cmake/main.c (`classify INPUT.bin`, which prints the model's
outputs) checked against the PyTorch reference output_0.npy.
Used by tests/integration/*.py and tests/cmake/run_cmake_test.py.
DEVICES lists dlcc targets: "cpu", and "gpu" where the runtime library is
built (a -t gpu object links only with it)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS / "firmware"))
sys.path.insert(0, str(TESTS / "e2e"))
from run_e2e import compare  # noqa: E402
from run_firmware import run, run_qemu, script_main  # noqa: E402,F401  (re-exported)

RTOL, ATOL = 1e-3, 1e-4


def install(build_dir, prefix, tmp):
    """`meson install --destdir TMP/dest` of BUILD_DIR (configured with
    PREFIX); returns (the destdir, the prefix inside it)."""
    dest = Path(tmp) / "dest"
    run(["meson", "install", "-C", build_dir, "--no-rebuild", "--quiet", "--destdir", dest])
    inst = dest / str(prefix).lstrip("/")
    print("installed into %s" % inst)
    return dest, inst


class Mlp:
    """tests/e2e/mlp copied to TMP/mlp (a test may touch its weights), its
    input written as raw float32 for classify, and its reference output."""

    def __init__(self, root, tmp):
        self.dir = Path(tmp) / "mlp"
        shutil.copytree(Path(root) / "tests" / "e2e" / "mlp", self.dir)
        self.model = self.dir / "model.json"
        self.weights = self.dir / "model.safetensors"
        self.input = Path(tmp) / "input.bin"
        np.load(self.dir / "input_0.npy").astype(np.float32).tofile(self.input)
        self.ref = np.load(self.dir / "output_0.npy")
        self.main_c = Path(root) / "examples" / "cmake" / "main.c"

    def check(self, what, classify, gpu_header=None):
        """Runs CLASSIFY on the input; True when its outputs match the reference.
        GPU_HEADER, the mlp.h of a `-t gpu` object: on a machine without an
        NVIDIA device classify must instead report mlp_run's mlp_ERR_DEVICE
        (which needs the runtime library linked: libdlcc_runtime.a's dlcc_gpu_run)."""
        p = subprocess.run([str(classify), str(self.input)], capture_output=True, text=True, timeout=600)
        if gpu_header and not Path("/dev/nvidiactl").exists():
            code = re.search(r"#define mlp_ERR_DEVICE \((-?\d+)\)", Path(gpu_header).read_text()).group(1)
            want = "mlp_run returned %s" % code
            ok = p.returncode == 1 and want in p.stderr
            print("%s %s: no NVIDIA device here; %s" % ("ok  " if ok else "FAIL", what, "'%s', as expected" % want
                  if ok else "expected '%s' and exit 1, got exit %d\n%s" % (want, p.returncode, p.stderr)))
            return ok
        if p.returncode:
            print("FAIL %s: %s exited with %d\n%s" % (what, classify, p.returncode, p.stderr))
            return False
        lines = p.stdout.split("\n")
        got = np.array([float(x) for x in lines[:self.ref.size]], np.float32).reshape(self.ref.shape)
        return compare(what, got, self.ref, RTOL, ATOL)

    def check_devices(self, what, devices, folder):
        """check() of FOLDER(device)/classify, built from the model compiled
        with `-t device` into FOLDER(device), for each of DEVICES."""
        ok = True
        for device in devices:
            ok &= self.check("%s, -t %s" % (what, device), folder(device) / "classify",
                             folder(device) / "mlp.h" if device == "gpu" else None)
        return ok

    def meson_project(self, proj, devices, subproject):
        """Writes the consumer project of docs/build-integration.md ("Meson")
        into PROJ: with SUBPROJECT, dlcc from PROJ/subprojects/dlcc, else an
        installed one.  PROJ/DEVICE/meson.build compiles the model with
        `-t DEVICE` and links classify from examples/cmake/main.c."""
        proj.mkdir(parents=True, exist_ok=True)
        shutil.copy(self.main_c, proj / "main.c")
        top = MESON_TOP % ("subproject('dlcc', default_options : ['tests=false'])\n" if subproject else "")
        for device in devices:
            (proj / device).mkdir()
            (proj / device / "meson.build").write_text(MESON_DEVICE % (self.model, device))
            top += "subdir('%s')\n" % device
        (proj / "meson.build").write_text(top)


MESON_TOP = """project('consumer', 'c', default_options : ['c_std=c11'])
%sdlcc = find_program('dlcc')
runtime_dep = dependency('dlcc-runtime')
"""
# one folder per device: each writes mlp.o and mlp.h
MESON_DEVICE = """mlp = custom_target('mlp',
  input : '%s',
  output : ['mlp.o', 'mlp.h'],
  depfile : 'mlp.d',
  command : [dlcc, '@INPUT@', '-o', '@OUTDIR@', '--name', 'mlp', '--depfile', '@DEPFILE@', '-t', '%s'])
executable('classify', '../main.c', mlp, dependencies : runtime_dep)
"""


def check_close(what, got, ref):
    return compare(what, got, ref, RTOL, ATOL)
