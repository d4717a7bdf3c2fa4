#!/usr/bin/env python3
"""Generated-code safety: compiles a model to an object (--name m) and links
it with a C driver, made from the generated header, that surrounds every
input, output and the workspace with 4 KiB guard zones of 0xA5, then checks:

  - m_run returns m_OK, leaves every guard byte intact and the inputs
    unchanged, and writes every output element (outputs start as all-ones
    bytes, a NaN pattern no finite result has);
  - a second run on a dirty workspace (0xA5 garbage) gives byte-identical
    outputs (the code must not rely on a zeroed workspace), as does m_run_ptrs;
  - m_run and m_run_ptrs return m_ERR_NULL (-1) and write nothing for NULL
    in, out, each NULL input or output field, and a NULL workspace when
    m_WORKSPACE_SIZE > 0;
  - the outputs match output_K.npy (rtol 1e-3, atol 1e-4).

    run_guards.py DLCC CC MODEL_DIR [-- DLCC_OPTIONS...]
"""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from run_compiled import fields as compiled_fields  # noqa: E402
from run_e2e import compare  # noqa: E402

DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "m.h"

#define GUARD 4096
#define GUARD_BYTE 0xA5
#define FRESH_BYTE 0xFF   /* outputs before a run: all-ones, a NaN / -1 pattern */

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL: " __VA_ARGS__); \
                                             fputc('\n', stderr); } } while (0)

/* A payload of `bytes` at a 4096-aligned address with GUARD bytes of
 * GUARD_BYTE on each side. */
typedef struct Zone { unsigned char *base; size_t bytes; const char *what; } Zone;

static void *zone_new(Zone *z, size_t bytes, const char *what)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, 2 * GUARD + bytes + (bytes ? 0 : 1))) { fprintf(stderr, "out of memory\n"); exit(3); }
    z->base = p;
    z->bytes = bytes;
    z->what = what;
    memset(z->base, GUARD_BYTE, 2 * GUARD + bytes);
    return z->base + GUARD;
}

static void zone_check(const Zone *z, const char *when)
{
    for (size_t i = 0; i < GUARD; i++) {
        if (z->base[i] != GUARD_BYTE) {
            CHECK(0, "%s: %s: guard byte %zu before the buffer was overwritten", when, z->what, GUARD - i);
            return;
        }
        if (z->base[GUARD + z->bytes + i] != GUARD_BYTE) {
            CHECK(0, "%s: %s: guard byte %zu after the buffer was overwritten", when, z->what, i);
            return;
        }
    }
}

/* Exactly `bytes` bytes of a raw file. */
static void read_raw(const char *path, void *dst, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f || fread(dst, 1, bytes, f) != bytes || fgetc(f) != EOF) { fprintf(stderr, "bad input file %s\n", path); exit(3); }
    fclose(f);
}

static int all_fresh(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != FRESH_BYTE)
            return 0;
    return 1;
}

enum { NI = m_NUM_INPUTS, NO = m_NUM_OUTPUTS };

int main(int argc, char **argv)
{
    static const size_t in_bytes[NI + 1] = { @IN_BYTES@ };
    static const size_t out_bytes[NO + 1] = { @OUT_BYTES@ };
    static const size_t out_elem[NO + 1] = { @OUT_ELEM@ };
    static const char *const in_names[NI + 1] = { @IN_NAMES@ };
    static const char *const out_names[NO + 1] = { @OUT_NAMES@ };
    Zone zi[NI + 1], zo[NO + 1], zw;
    void *inp[NI + 1], *outp[NO + 1], *copy[NI + 1], *first[NO + 1];
    if (argc != 1 + NI + NO) { fprintf(stderr, "usage: driver INPUT.bin... OUTPUT.bin...\n"); return 2; }
    for (int i = 0; i < NI; i++) {
        inp[i] = zone_new(&zi[i], in_bytes[i], in_names[i]);
        read_raw(argv[1 + i], inp[i], in_bytes[i]);
        copy[i] = malloc(in_bytes[i] + 1);
        memcpy(copy[i], inp[i], in_bytes[i]);
    }
    for (int k = 0; k < NO; k++) {
        outp[k] = zone_new(&zo[k], out_bytes[k], out_names[k]);
        memset(outp[k], FRESH_BYTE, out_bytes[k]);
        first[k] = malloc(out_bytes[k] + 1);
    }
    void *ws = zone_new(&zw, m_WORKSPACE_SIZE, "the workspace");
    m_inputs in;
    m_outputs out;
@FILL@
    /* 1. a run on a fresh workspace */
    int32_t rc = m_run(&in, &out, m_WORKSPACE_SIZE ? ws : NULL);
    CHECK(rc == m_OK, "m_run returned %d", (int)rc);
    for (int i = 0; i < NI; i++) {
        zone_check(&zi[i], "run 1");
        CHECK(memcmp(copy[i], inp[i], in_bytes[i]) == 0, "run 1 changed input %s", in_names[i]);
    }
    for (int k = 0; k < NO; k++) {
        zone_check(&zo[k], "run 1");
        size_t eb = out_elem[k] ? out_bytes[k] / out_elem[k] : 1;
        for (size_t e = 0; e < out_elem[k]; e++)
            if (all_fresh((unsigned char *)outp[k] + e * eb, eb)) {
                CHECK(0, "run 1 did not write element %zu of output %s", e, out_names[k]);
                break;
            }
        memcpy(first[k], outp[k], out_bytes[k]);
        FILE *f = fopen(argv[1 + NI + k], "wb");
        if (!f || fwrite(outp[k], 1, out_bytes[k], f) != out_bytes[k] || fclose(f)) return 3;
    }
    zone_check(&zw, "run 1");

    /* 2. again on the dirty workspace, then by position */
    for (int pass = 0; pass < 2; pass++) {
        const char *when = pass ? "m_run_ptrs" : "run 2";
        for (int k = 0; k < NO; k++)
            memset(outp[k], FRESH_BYTE, out_bytes[k]);
        memset(ws, GUARD_BYTE, m_WORKSPACE_SIZE);
        rc = pass ? m_run_ptrs((const void *const *)inp, (void *const *)outp, m_WORKSPACE_SIZE ? ws : NULL)
                  : m_run(&in, &out, m_WORKSPACE_SIZE ? ws : NULL);
        CHECK(rc == m_OK, "%s returned %d", when, (int)rc);
        for (int k = 0; k < NO; k++) {
            zone_check(&zo[k], when);
            CHECK(memcmp(first[k], outp[k], out_bytes[k]) == 0, "%s: output %s differs from run 1", when, out_names[k]);
        }
        for (int i = 0; i < NI; i++) {
            zone_check(&zi[i], when);
            CHECK(memcmp(copy[i], inp[i], in_bytes[i]) == 0, "%s changed input %s", when, in_names[i]);
        }
        zone_check(&zw, when);
    }

    /* 3. NULL pointers: m_ERR_NULL and nothing written */
    for (int k = 0; k < NO; k++)
        memset(outp[k], FRESH_BYTE, out_bytes[k]);
    CHECK(m_ERR_NULL == -1, "m_ERR_NULL is %d, documented as -1", (int)m_ERR_NULL);
    CHECK(m_run(NULL, &out, ws) == m_ERR_NULL, "m_run(NULL in) did not return m_ERR_NULL");
    CHECK(m_run(&in, NULL, ws) == m_ERR_NULL, "m_run(NULL out) did not return m_ERR_NULL");
    CHECK(m_run_ptrs(NULL, (void *const *)outp, ws) == m_ERR_NULL, "m_run_ptrs(NULL inputs) did not return m_ERR_NULL");
    CHECK(m_run_ptrs((const void *const *)inp, NULL, ws) == m_ERR_NULL, "m_run_ptrs(NULL outputs) did not return m_ERR_NULL");
    if (m_WORKSPACE_SIZE > 0) {
        CHECK(m_run(&in, &out, NULL) == m_ERR_NULL, "m_run(NULL workspace) did not return m_ERR_NULL");
        CHECK(m_run_ptrs((const void *const *)inp, (void *const *)outp, NULL) == m_ERR_NULL,
              "m_run_ptrs(NULL workspace) did not return m_ERR_NULL");
    }
@NULLS@
    for (int i = 0; i < NI; i++) {
        void *keep = inp[i];
        inp[i] = NULL;
        CHECK(m_run_ptrs((const void *const *)inp, (void *const *)outp, ws) == m_ERR_NULL,
              "m_run_ptrs with input %s NULL did not return m_ERR_NULL", in_names[i]);
        inp[i] = keep;
    }
    for (int k = 0; k < NO; k++) {
        void *keep = outp[k];
        outp[k] = NULL;
        CHECK(m_run_ptrs((const void *const *)inp, (void *const *)outp, ws) == m_ERR_NULL,
              "m_run_ptrs with output %s NULL did not return m_ERR_NULL", out_names[k]);
        outp[k] = keep;
    }
    for (int k = 0; k < NO; k++) {
        CHECK(all_fresh(outp[k], out_bytes[k]), "a call that returned m_ERR_NULL wrote output %s", out_names[k]);
        zone_check(&zo[k], "NULL calls");
    }
    for (int i = 0; i < NI; i++)
        zone_check(&zi[i], "NULL calls");
    zone_check(&zw, "NULL calls");
    if (failures)
        return 1;
    printf("guards intact, inputs unchanged, outputs complete and repeatable, NULL pointers refused "
           "(%d inputs, %d outputs, workspace %d bytes)\n", NI, NO, (int)m_WORKSPACE_SIZE);
    return 0;
}
"""


def fields(header, kind):
    """(field, NAME_BYTES macro, NAME_SIZE macro) of the inputs or outputs struct, in order."""
    return [(n, b, b[:-len("_BYTES")] + "_SIZE") for n, b in compiled_fields(header, kind)]


def driver_source(header):
    ins, outs = fields(header, "inputs"), fields(header, "outputs")
    fill = ["    in.%s = inp[%d];" % (n, i) for i, (n, _, _) in enumerate(ins)]
    fill += ["    out.%s = outp[%d];" % (n, k) for k, (n, _, _) in enumerate(outs)]
    nulls = []
    for kind, lst in (("in", ins), ("out", outs)):
        for n, _, _ in lst:
            nulls.append("    { void *keep = (void *)%s.%s; %s.%s = NULL;\n"
                         "      CHECK(m_run(&in, &out, ws) == m_ERR_NULL, \"m_run with %s.%s NULL did not return m_ERR_NULL\");\n"
                         "      %s.%s = keep; }" % (kind, n, kind, n, kind, n, kind, n))
    lst = lambda xs: ", ".join(xs + ["0"])
    return (DRIVER.replace("@FILL@", "\n".join(fill)).replace("@NULLS@", "\n".join(nulls))
            .replace("@IN_BYTES@", lst([b for _, b, _ in ins])).replace("@OUT_BYTES@", lst([b for _, b, _ in outs]))
            .replace("@OUT_ELEM@", lst([s for _, _, s in outs]))
            .replace("@IN_NAMES@", lst(['"%s"' % n for n, _, _ in ins]))
            .replace("@OUT_NAMES@", lst(['"%s"' % n for n, _, _ in outs]))), len(ins), len(outs)


def step(what, argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode:
        print("FAIL: %s exited with status %d\n%s" % (what, p.returncode, p.stderr))
    return p.returncode == 0


def check(a, tmp):
    """Compiles, builds the driver, runs it; True when every check passed."""
    cmd = [a.dlcc, str(a.model_dir / "model.json"), "-o", str(tmp), "--name", "m"] + a.options
    build = [a.cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O1", "-I", str(tmp),
             str(tmp / "driver.c"), str(tmp / "m.o"), "-lm", "-o", str(tmp / "driver")]
    print("$ " + " ".join(cmd))
    if not step("dlcc", cmd):
        return False
    src, n_in, n_out = driver_source((tmp / "m.h").read_text())
    (tmp / "driver.c").write_text(src)
    if not step("the driver's build", build):
        return False
    args = []
    for i in range(n_in):      # the inputs as raw bytes (the driver reads nothing else)
        np.load(a.model_dir / ("input_%d.npy" % i)).tofile(tmp / ("in_%d.bin" % i))
        args.append(str(tmp / ("in_%d.bin" % i)))
    args += [str(tmp / ("out_%d.bin" % k)) for k in range(n_out)]
    p = subprocess.run([str(tmp / "driver")] + args, capture_output=True, text=True, timeout=300)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode:
        print("FAIL: the driver exited with status %d" % p.returncode)
        return False
    ok = True
    for k in range(n_out):
        ref = np.load(a.model_dir / ("output_%d.npy" % k))
        got = np.fromfile(tmp / ("out_%d.bin" % k), dtype=ref.dtype).reshape(ref.shape)
        ok &= compare("output %d" % k, got, ref, 1e-3, 1e-4)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dlcc")
    ap.add_argument("cc")
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("options", nargs="*")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dlcc-guards-") as tmp:
        ok = check(a, Path(tmp))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
