#!/usr/bin/env python3
"""Compiles one end-to-end model to an object with dlcc, links it with a C
driver that uses only the generated header, runs it and compares with
PyTorch's outputs.

    run_compiled.py [--link ARG]... [--no-device-rc N] DLCC CC MODEL_DIR [--rtol R] [--atol A]
                    [-- DLCC_OPTIONS...]

--link adds a link argument (e.g. the dlcc runtime library for -t gpu).
--no-device-rc N: on a machine without an NVIDIA device (/dev/nvidiactl
absent), NAME_run must return exactly N (and nothing is compared); with a
device the outputs are compared as usual.

The driver is generated from the header's input/output structs: it reads
input_K.npy into the K-th input field, calls NAME_run (and, for -t gpu,
NAME_release, which must return NAME_OK), and writes each output as raw
bytes, which are compared with output_K.npy (rtol 1e-3, atol 1e-4).
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from run_e2e import compare

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "m.h"

/* Reads the data of a little-endian .npy file (version 1, 2 or 3) of exactly
 * `bytes` bytes of payload. */
static void *read_npy(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    unsigned char h[12];
    if (!f || fread(h, 1, 10, f) != 10 || memcmp(h, "\x93NUMPY", 6)) { fprintf(stderr, "bad npy %s\n", path); exit(3); }
    size_t hl = h[8] | (size_t)h[9] << 8, skip = 10;
    if (h[6] >= 2) {
        if (fread(h + 10, 1, 2, f) != 2) exit(3);
        hl |= (size_t)h[10] << 16 | (size_t)h[11] << 24;
        skip = 12;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p || fseek(f, (long)(skip + hl), SEEK_SET) || fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "short npy %s\n", path); exit(3); }
    fclose(f);
    return p;
}

int main(int argc, char **argv)
{
    (void)argc;
    m_inputs in;
    m_outputs out;
    void *ws = NULL;
    if (m_WORKSPACE_SIZE > 0 && posix_memalign(&ws, m_WORKSPACE_ALIGN, m_WORKSPACE_SIZE)) return 4;
@LOAD@
    int32_t rc = m_run(&in, &out, ws);
#ifdef m_ERR_DEVICE   /* -t gpu: frees the device state (nothing when the run found no device) */
    int32_t released = m_release(ws);
    if (released != m_OK) { fprintf(stderr, "m_release returned %d\n", (int)released); return 8; }
#endif
    if (rc != m_OK) { fprintf(stderr, "m_run returned %d\n", (int)rc); return 5; }
@STORE@
    free(ws);
    return 0;
}
"""


def fields(header, kind):
    """Field names of the inputs or outputs struct, in order, with their byte sizes."""
    end = header.index("} m_%s;" % kind)
    body = header[header.rindex("typedef struct {", 0, end):end]
    names = re.findall(r"\*(\w+);", body)
    tag = "INPUT" if kind == "inputs" else "OUTPUT"
    return [(n, "m_%s_%s_BYTES" % (tag, n)) for n in names]


def driver_source(header):
    """The driver's C source for the header m.h, and its input and output fields."""
    ins, outs = fields(header, "inputs"), fields(header, "outputs")
    load = "\n".join("    in.%s = read_npy(argv[%d], %s);" % (n, i + 1, b) for i, (n, b) in enumerate(ins))
    store = "\n".join(
        "    { FILE *f = fopen(argv[%d], \"wb\"); if (!f || fwrite(out.%s, 1, %s, f) != %s) return 6; fclose(f); }"
        % (len(ins) + k + 1, n, b, b) for k, (n, b) in enumerate(outs))
    alloc = "\n".join("    out.%s = malloc(%s ? %s : 1);" % (n, b, b) for n, b in outs)
    return DRIVER.replace("@LOAD@", load + "\n" + alloc).replace("@STORE@", store), ins, outs


def run_driver(cc, tmp, model_dir, objects, cflags=(), link=(), no_device_rc=None):
    """Builds the driver for tmp/m.h with the given objects or sources, runs it on
    model_dir/input_K.npy; returns [(output name, got, expected)] or None (printed why).
    no_device_rc: without an NVIDIA device, m_run must return it; [] then."""
    source, ins, outs = driver_source((tmp / "m.h").read_text())
    (tmp / "driver.c").write_text(source)
    build = [cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror", "-O1"] + list(cflags) + [
        "-I", str(tmp), str(tmp / "driver.c")] + objects + list(link) + ["-lm", "-o", str(tmp / "driver")]
    p = subprocess.run(build, capture_output=True, text=True)
    if p.returncode:
        print("FAIL: the driver did not build\n%s" % p.stderr)
        return None
    refs = [np.load(model_dir / ("output_%d.npy" % k)) for k in range(len(outs))]
    args = [str(model_dir / ("input_%d.npy" % i)) for i in range(len(ins))]
    args += [str(tmp / ("out_%d.bin" % k)) for k in range(len(outs))]
    p = subprocess.run([str(tmp / "driver")] + args, capture_output=True, text=True, timeout=300)
    if no_device_rc is not None and not Path("/dev/nvidiactl").exists():
        want = "m_run returned %d" % no_device_rc
        if p.returncode == 5 and want in p.stderr:
            print("no NVIDIA device here and %s, as expected" % want)
            return []
        print("FAIL: without a device, expected '%s'; the driver exited with status %d\n%s"
              % (want, p.returncode, p.stderr))
        return None
    if p.returncode:
        print("FAIL: the driver exited with status %d\n%s" % (p.returncode, p.stderr))
        return None
    return [(name, np.fromfile(tmp / ("out_%d.bin" % k), dtype=refs[k].dtype).reshape(refs[k].shape), refs[k])
            for k, (name, _) in enumerate(outs)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlcc")
    ap.add_argument("cc")
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--link", action="append", default=[])
    ap.add_argument("--no-device-rc", type=int)
    ap.add_argument("options", nargs="*")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dlcc-compiled-") as tmp:
        tmp = Path(tmp)
        cmd = [a.dlcc, str(a.model_dir / "model.json"), "-o", str(tmp), "--name", "m"] + a.options
        print("$ " + " ".join(cmd))
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            print("FAIL: dlcc exited with status %d\n%s" % (p.returncode, p.stderr))
            return 1
        results = run_driver(a.cc, tmp, a.model_dir, [str(tmp / "m.o")], link=a.link, no_device_rc=a.no_device_rc)
        if results is None:
            return 1
        ok = True
        for name, got, ref in results:
            ok &= compare(name, got, ref, a.rtol, a.atol)
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
