#!/usr/bin/env python3
"""Compiles one end-to-end model (MODEL_DIR/model.json, else model.onnx) with `dlcc -t hetero`, links every file of the
output folder with tests/hetero/driver.c and the runtime library, runs it on
StarPU and compares its outputs with the reference interpreter's (`dlcc run`).

    run_hetero.py [--link ARG]... [--mode run|stream|bench|mpi] [--inputs N]
                  [--mpirun MPIRUN] [--ranks N] [--min-devices K] [--conv-on KIND --others-on KIND]
                  [--expect-rc N | --no-device-rc N] [--env NAME=VALUE]... [--reproducible]
                  [--timeout S] DLCC CC MODEL_DIR [-- DLCC_OPTIONS...]

--link adds a link argument (the runtime library, StarPU); --mode picks the
driver's mode (driver.c); --min-devices K: the partitions must use at least K
devices; --conv-on gpu --others-on cpu: every partition holding a Conv runs
on a device of that kind, every other one on the other kind.  --mode mpi runs
the driver under MPIRUN -np N (ranks; --oversubscribe) with DLCC_HETERO_TRACE
set, and some partition must have run on rank 1.  --expect-rc N: m_run must
return N (a device or StarPU failing), and --no-device-rc N the same where
/dev/nvidiactl is absent.  --reproducible: a second compilation writes the
same bytes.  Outputs must match the interpreter at rtol 1e-3, atol 1e-4.
Exit status: 0 pass, 1 fail.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
from run_compiled import fields        # noqa: E402  (the header's input/output fields)
from run_e2e import compare, file_name  # noqa: E402


def sizes_header(header):
    """sizes.h for driver.c: the byte size of every input and output, and which inputs are float32."""
    ins, outs = fields(header, "inputs"), fields(header, "outputs")
    f32 = []
    for n, _ in ins:
        line = next(ln for ln in header.splitlines() if ln.startswith("#define m_INPUT_%s_SIZE " % n))
        f32.append("1" if "float32" in line else "0")
    return ("static const size_t in_bytes[] = {%s 0};\nstatic const size_t out_bytes[] = {%s 0};\n"
            "static const int in_f32[] = {%s 0};\n" % (
                "".join("%s, " % b for _, b in ins), "".join("%s, " % b for _, b in outs),
                "".join("%s, " % x for x in f32)), ins, outs)


def model_file(model_dir):
    """MODEL_DIR/model.json (tests/e2e), else model.onnx (bench/models.py)."""
    json_model = model_dir / "model.json"
    return json_model if json_model.exists() else model_dir / "model.onnx"


def reference(dlcc, model_dir, tmp):
    """The interpreter's outputs for the model's committed inputs, by output name."""
    model = model_file(model_dir)
    p = subprocess.run([dlcc, "info", str(model), "--json"], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit("FAIL: dlcc info exited with status %d\n%s" % (p.returncode, p.stderr))
    doc = json.loads(p.stdout)
    cmd = [dlcc, "run", str(model), "-o", str(tmp / "ref")]
    for k, inp in enumerate(doc["inputs"]):
        cmd += ["-i", "%s=%s" % (inp["name"], model_dir / ("input_%d.npy" % k))]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit("FAIL: dlcc run exited with status %d\n%s" % (p.returncode, p.stderr))
    return [np.load(tmp / "ref" / file_name(o["name"])) for o in doc["outputs"]]


def check_plan(plan, a):
    """The partitions' devices against --min-devices and --conv-on / --others-on."""
    parts = plan["compiled"]["partitions"]
    kinds = {d["name"]: d["kind"] for d in plan["devices"]}
    for p in parts:
        print("  %s on %s (%s%s): %s" % (p["name"], p["device"], p["kind"], ", emulated" if p["emulated"] else "",
                                        " ".join(p["nodes"])))
    ok = True
    used = {p["device"] for p in parts}
    if a.min_devices and len(used) < a.min_devices:
        print("FAIL: the partitions use %d device(s), %s; expected at least %d" % (len(used), sorted(used),
                                                                                  a.min_devices))
        ok = False
    if a.conv_on:
        ops = {n["name"]: n["op"] for n in plan["nodes"]}
        for p in parts:
            conv = any(ops.get(n) == "Conv" for n in p["nodes"])
            want = a.conv_on if conv else a.others_on
            if kinds[p["device"]] != want:
                print("FAIL: %s (%s a Conv) runs on %s, a %s; expected a %s" % (
                    p["name"], "with" if conv else "without", p["device"], kinds[p["device"]], want))
                ok = False
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlcc")
    ap.add_argument("cc")
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--link", action="append", default=[])
    ap.add_argument("--mode", default="run", choices=["run", "stream", "bench", "mpi"])
    ap.add_argument("--inputs", type=int, default=16, help="inputs of --mode stream / bench")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--min-devices", type=int, default=0)
    ap.add_argument("--conv-on")
    ap.add_argument("--others-on")
    ap.add_argument("--expect-rc", type=int, help="m_run must return this code (nothing is compared)")
    ap.add_argument("--no-device-rc", type=int, help="without an NVIDIA device, m_run must return this code")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the driver's environment")
    ap.add_argument("--reproducible", action="store_true", help="a second compilation gives the same bytes")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--keep", type=Path, help="compile into this folder and keep it")
    ap.add_argument("options", nargs="*")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dlcc-hetero-") as tmp:
        tmp = Path(tmp)
        out = a.keep or tmp / "m"
        cmd = [a.dlcc, str(model_file(a.model_dir)), "-o", str(out), "--name", "m", "-t", "hetero"] + a.options
        print("$ " + " ".join(cmd), flush=True)
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            print("FAIL: dlcc exited with status %d\n%s" % (p.returncode, p.stderr))
            return 1
        print("compiled in %.2f s" % (time.time() - t0))
        if a.reproducible:
            again = tmp / "again"
            p = subprocess.run(cmd[:3] + [str(again)] + cmd[4:], capture_output=True, text=True)
            names = sorted(f.name for f in out.iterdir())
            if p.returncode or names != sorted(f.name for f in again.iterdir()) or any(
                    (out / n).read_bytes() != (again / n).read_bytes() for n in names):
                print("FAIL: a second compilation did not give the same files, byte for byte")
                return 1
            print("a second compilation gave the same %d files, byte for byte" % len(names))
        plan = json.loads((out / "m.partition.json").read_text())
        ok = check_plan(plan, a)
        header = (out / "m.h").read_text()
        text, ins, outs = sizes_header(header)
        (out / "sizes.h").write_text(text)
        # every object and FPGA C file of the folder, as docs/targets/hetero.md says to link
        sources = sorted(str(f) for f in out.iterdir() if f.suffix == ".o" or (f.suffix == ".c"))
        cflags = ["-DDRIVER_MPI"] if a.mode == "mpi" else []
        build = [a.cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-O1",
                 "-I", str(out)] + cflags + [str(HERE / "driver.c")] + sources + a.link + ["-lm", "-o",
                                                                                          str(tmp / "driver")]
        p = subprocess.run(build, capture_output=True, text=True)
        if p.returncode:
            print("FAIL: the driver did not build\n$ %s\n%s" % (" ".join(build), p.stderr))
            return 1
        refs = reference(a.dlcc, a.model_dir, tmp)
        args = [a.mode] + ([str(a.inputs)] if a.mode in ("stream", "bench") else [])
        args += [str(a.model_dir / ("input_%d.npy" % i)) for i in range(len(ins))]
        args += [str(tmp / ("out_%d.bin" % k)) for k in range(len(outs))]
        run = [str(tmp / "driver")] + args
        if a.mode == "mpi":
            run = [a.mpirun, "-np", str(a.ranks), "--oversubscribe"] + run
            a.env.append("DLCC_HETERO_TRACE=1")               # which rank ran each partition
        env = dict(os.environ, STARPU_SILENT="1")
        env.update(kv.split("=", 1) for kv in a.env)
        env.setdefault("STARPU_HOME", str(tmp))               # StarPU's calibration files: not in $HOME
        env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
        t0 = time.time()
        try:
            p = subprocess.run(run, capture_output=True, text=True, timeout=a.timeout, env=env)
        except subprocess.TimeoutExpired:
            print("FAIL: the driver ran past %g s" % a.timeout)
            return 1
        print("ran in %.2f s%s" % (time.time() - t0, "" if not p.stdout else "\n" + p.stdout.strip()))
        expect = a.expect_rc
        if a.no_device_rc is not None and not Path("/dev/nvidiactl").exists():
            expect = a.no_device_rc
        if expect is not None:
            want = "m_run returned %d" % expect
            if p.returncode == 5 and want in p.stderr:
                print("%s, as expected%s\nPASS" % (want, "" if a.expect_rc is not None else
                                                   " (no NVIDIA device here)"))
                return 0 if ok else 1
            print("FAIL: expected '%s'; the driver exited with status %d\n%s" % (want, p.returncode, p.stderr))
            return 1
        if p.returncode:
            print("FAIL: the driver exited with status %d\n%s" % (p.returncode, p.stderr))
            return 1
        if a.mode == "mpi" and "on rank 1" not in p.stderr:
            print("FAIL: no partition ran on MPI rank 1 (DLCC_HETERO_TRACE)\n%s" % p.stderr)
            return 1
        for k, (name, _) in enumerate(outs):
            got = np.fromfile(tmp / ("out_%d.bin" % k), dtype=refs[k].dtype).reshape(refs[k].shape)
            ok &= compare(name, got, refs[k], 1e-3, 1e-4)
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
