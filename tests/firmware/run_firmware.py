#!/usr/bin/env python3
"""Firmware test: models compiled by dlcc for Cortex-M4 run on QEMU's
mps2-an386 board and print their outputs through semihosting.

    run_firmware.py DLCC EXAMPLES_FIRMWARE_DIR MODEL_DIR...

Two images are built with arm-none-eabi-gcc + newlib (librdimon):

1. every model, each compiled with its own --name, linked together and run
   one after the other on ONE workspace buffer of the largest
   NAME_WORKSPACE_SIZE (several models in one firmware, no symbol clash);
2. the first model again with --static-workspace --workspace-section,
   --weights-section and --no-libm, called with workspace == NULL.

Outputs (printed as the float32 bit patterns) are compared with the
reference output_K.npy (rtol 1e-3, atol 1e-4).  The stack each run used is
measured by painting the stack before the call.  For every model the test
prints flash (text + rodata of the object) and RAM (workspace + stack), and
checks with arm-none-eabi-nm -u that the object needs no heap and no stdio:
only memcpy/memset/memmove, compiler helpers (__aeabi_*) and, without
--no-libm, libm functions.  Exit 77 (skip) when the cross toolchain or QEMU
is missing.
"""

import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from run_e2e import compare  # noqa: E402

TOOLS = ["arm-none-eabi-gcc", "arm-none-eabi-nm", "arm-none-eabi-size", "qemu-system-arm"]
CFLAGS = ["-mthumb", "-O2", "-std=c11", "-Wall", "-Werror", "-ffunction-sections", "-fdata-sections"]

# (label, dlcc flags, gcc flags, QEMU machine or None: compile/link only, extra dlcc options of image 1)
# Thumb-1 (v6-M) code runs on the Cortex-M3 of mps2-an385, so the M0+ build
# runs there (soft float, with dlcc's own math).  The RV32 objects are only
# checked (no RISC-V toolchain here).
TARGETS = [
    ("cortex-m4", ["--triple", "thumbv7em-none-eabihf", "--mcpu", "cortex-m4"],
     ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"], "mps2-an386", []),
    ("cortex-m7", ["--triple", "thumbv7em-none-eabihf", "--mcpu", "cortex-m7"],
     ["-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16"], "mps2-an500", []),
    ("cortex-m0plus", ["--triple", "thumbv6m-none-eabi", "--mcpu", "cortex-m0plus"],
     ["-mcpu=cortex-m0plus", "-mfloat-abi=soft"], "mps2-an385", ["--no-libm"]),
    ("cortex-m33", ["--triple", "thumbv8m.main-none-eabihf", "--mcpu", "cortex-m33"],
     ["-mcpu=cortex-m33", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"], None, []),
    ("rv32", ["--triple", "riscv32-unknown-elf", "--mcpu", "generic-rv32"], None, None, []),
]
TRIPLE = TARGETS[0][1]
# the int8 models again for a Cortex-M4 without an FPU: the float32 steps of the requantization
# through the compiler's soft-float helpers (exact too), run on the same board
SOFT_FLOAT = ("without an FPU", ["--triple", "thumbv7em-none-eabi", "--mcpu", "cortex-m4", "--mattr=-fpregs"],
              ["-mcpu=cortex-m4", "-mfloat-abi=soft"])
LIBM = {"expf", "logf", "sqrtf", "sinf", "cosf", "tanf", "tanhf", "erff", "powf", "floorf", "ceilf",
        "roundevenf", "fmaf", "asinf", "acosf", "atanf", "sinhf", "coshf", "asinhf", "acoshf", "atanhf",
        "exp", "log", "sqrt", "floor", "ceil", "fma", "pow"}
ALWAYS_OK = {"memcpy", "memset", "memmove"}
PAINT = 32768


def run(cmd, **kw):
    cmd = [str(c) for c in cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    if p.returncode:
        raise RuntimeError("$ %s\nexit %d\n%s%s" % (" ".join(map(str, cmd)), p.returncode, p.stdout, p.stderr))
    return p.stdout


def fields(header, name, kind):
    end = header.index("} %s_%s;" % (name, kind))
    body = header[header.rindex("typedef struct {", 0, end):end]
    return re.findall(r"\*(\w+);", body)


def macro(header, name):
    return int(re.search(r"#define %s (\d+)" % name, header).group(1))


def c_floats(a):
    vals = [float(x).hex() + "f" for x in np.asarray(a, dtype=np.float32).ravel()]
    return "{" + ", ".join(vals) + "}" if vals else "{0}"


def model_code(name, mdir, header, ws_expr):
    """Declarations and the call of one model: inputs as constant arrays,
    outputs as static arrays, then one line per output value."""
    ins, outs = fields(header, name, "inputs"), fields(header, name, "outputs")
    decl, call = [], []
    for i, f in enumerate(ins):
        decl.append("static const float %s_in_%s[] = %s;" % (name, f, c_floats(np.load(mdir / ("input_%d.npy" % i)))))
    for f in outs:
        decl.append("static float %s_out_%s[%s_OUTPUT_%s_SIZE];" % (name, f, name, f))
    call.append("    {")
    call.append("        %s_inputs in; %s_outputs out;" % (name, name))
    call += ["        in.%s = %s_in_%s;" % (f, name, f) for f in ins]
    call += ["        out.%s = %s_out_%s;" % (f, name, f) for f in outs]
    call.append("        uint32_t sp = paint_stack();")
    call.append("        int32_t rc = %s_run(&in, &out, %s);" % (name, ws_expr))
    call.append("        printf(\"RUN %s %%d %%lu\\n\", (int)rc, (unsigned long)stack_peak(sp));" % name)
    for k, f in enumerate(outs):
        call.append("        print_floats(\"%s\", %d, %s_out_%s, %s_OUTPUT_%s_SIZE);" % (name, k, name, f, name, f))
    call.append("    }")
    return decl, call


MAIN = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
@INCLUDES@

/* Fills the PAINT bytes below the current stack pointer with a pattern (this
 * leaf function's frame lies above its stack pointer); the lowest overwritten
 * word after a call tells how deep the call went. */
#define PAINT @PAINT@u
__attribute__((noinline)) static uint32_t paint_stack(void)
{
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    volatile uint32_t *p = (volatile uint32_t *)(sp - PAINT);
    for (uint32_t i = 0; i < PAINT / 4; i++)
        p[i] = 0xA5C3A5C3u;
    return sp;
}

static uint32_t stack_peak(uint32_t sp)
{
    volatile uint32_t *p = (volatile uint32_t *)(sp - PAINT);
    uint32_t i = 0;
    while (i < PAINT / 4 && p[i] == 0xA5C3A5C3u)
        i++;
    return PAINT - 4 * i;
}

static void print_floats(const char *model, int k, const float *v, int n)
{
    for (int i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], 4);
        printf("OUT %s %d %08lx\n", model, k, (unsigned long)bits);
    }
}

@DECL@

int main(void)
{
@CALLS@
    printf("DONE\n");
    return 0;
}
"""


def build_image(tmp, tag, board, models, objs, ws_decl, calls_for, gflags=TARGETS[0][2]):
    incs, decls, calls = [], [ws_decl], []
    for name, mdir, header in models:
        incs.append('#include "%s.h"' % name)
        d, c = calls_for(name, mdir, header)
        decls += d
        calls += c
    src = MAIN.replace("@INCLUDES@", "\n".join(incs)).replace("@PAINT@", str(PAINT))
    src = src.replace("@DECL@", "\n".join(decls)).replace("@CALLS@", "\n".join(calls))
    (tmp / ("%s.c" % tag)).write_text(src)
    elf = tmp / ("%s.elf" % tag)
    run(["arm-none-eabi-gcc"] + CFLAGS + gflags + ["-I", str(tmp), "--specs=rdimon.specs", "-nostartfiles",
        "-T", str(board / "mps2-an386.ld"), "-Wl,--gc-sections", "-Wl,--no-warn-execstack", str(board / "startup.c"),
        str(tmp / ("%s.c" % tag))] + [str(o) for o in objs] + ["-lm", "-o", str(elf)])
    print(run(["arm-none-eabi-size", str(elf)]).rstrip())
    return elf


def run_qemu(elf, machine="mps2-an386", done="DONE"):
    """Runs an image until it exits (semihosting), at most 120 s; its output
    must contain `done`."""
    p = subprocess.run(["qemu-system-arm", "-M", machine, "-nographic", "-monitor", "none", "-serial",
                        "null", "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)],
                       capture_output=True, text=True, timeout=120)
    if p.returncode:
        raise RuntimeError("qemu exited with status %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    if done not in p.stdout:
        raise RuntimeError("the firmware did not finish:\n" + p.stdout)
    return p.stdout


def check_outputs(text, models):
    ok, stacks = True, {}
    for name, mdir, header in models:
        m = re.search(r"^RUN %s (-?\d+) (\d+)$" % name, text, re.M)
        if not m or int(m.group(1)) != 0:
            print("FAIL: %s_run did not return 0: %s" % (name, m.group(0) if m else "no RUN line"))
            ok = False
            continue
        stacks[name] = int(m.group(2))
        for k, _ in enumerate(fields(header, name, "outputs")):
            bits = re.findall(r"^OUT %s %d ([0-9a-f]{8})$" % (name, k), text, re.M)
            got = np.array([struct.unpack("<f", struct.pack("<I", int(b, 16)))[0] for b in bits], np.float32)
            ref = np.load(mdir / ("output_%d.npy" % k))
            if got.size != ref.size:
                print("FAIL: %s output %d has %d values, expected %d" % (name, k, got.size, ref.size))
                ok = False
                continue
            ok &= compare("%s/%d" % (name, k), got.reshape(ref.shape), ref, 1e-3, 1e-4)
    return ok, stacks


def check_undefined(obj, no_libm):
    """Only memcpy/memset/memmove, the compiler's runtime helpers (__aeabi_*,
    __adddf3, ...: libgcc / compiler-rt) and libm (unless no_libm)."""
    bad = []
    for sym in run(["arm-none-eabi-nm", "-u", str(obj)]).split():
        if sym in ("U", "w"):
            continue
        if sym in ALWAYS_OK or sym.startswith("__") or (sym in LIBM and not no_libm):
            continue
        bad.append(sym)
    if bad:
        print("FAIL: %s references %s%s" % (obj.name, ", ".join(bad), " (built with --no-libm)" if no_libm else ""))
    return not bad


def sizes(obj):
    """text (code), rodata (weights and tables), bss of an object."""
    text = rodata = bss = 0
    for line in run(["arm-none-eabi-size", "-A", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[1].isdigit():
            continue
        sec, n = parts[0], int(parts[1])
        if sec.startswith(".text") or sec.startswith(".ARM.exidx"):
            text += n
        elif sec.startswith(".rodata"):
            rodata += n
        elif sec.startswith(".bss"):
            bss += n
        elif sec.startswith(".data") and n:
            raise RuntimeError("%s has %d bytes of .data (writable initialized state)" % (obj, n))
    return text, rodata, bss


def compile_model(dlcc, mdir, name, out, extra, triple=TRIPLE):
    run([dlcc, str(mdir / "model.json"), "-t", "cpu"] + triple + ["--name", name, "-o", str(out)] + extra)
    return out / ("%s.o" % name), (out / ("%s.h" % name)).read_text()


def main():
    dlcc, board = sys.argv[1], Path(sys.argv[2])
    mdirs = [Path(m) for m in sys.argv[3:] if not m.startswith("int8=")]
    int8 = [m[5:].split(",") for m in sys.argv[3:] if m.startswith("int8=")]
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        print("SKIP: %s not found (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)"
              % ", ".join(missing))
        return 77
    ok = True
    table = []
    with tempfile.TemporaryDirectory(prefix="dlcc-firmware-") as tmp:
        tmp = Path(tmp)
        # 1. per target: all models in one image on one shared workspace
        for label, triple, gflags, machine, extra in TARGETS:
            tdir = tmp / label
            no_libm = "--no-libm" in extra
            models, objs = [], []
            for mdir in mdirs:
                name = mdir.name
                obj, header = compile_model(dlcc, mdir, name, tdir, extra, triple)
                ok &= check_undefined(obj, no_libm)
                models.append((name, mdir, header))
                objs.append(obj)
            stacks = {}
            if gflags:
                ws_decl = ("#define WS_MAX(a, b) ((a) > (b) ? (a) : (b))\n" +
                           "static uint8_t workspace[%s + 1] __attribute__((aligned(64)));" %
                           nest_max([("%s_WORKSPACE_SIZE" % n) for n, _, _ in models]))
                print("== %s: %s" % (label, "linked and run on QEMU " + machine if machine else "linked"))
                elf = build_image(tdir, "all", board, models, objs, ws_decl,
                                  lambda n, m, h: model_code(n, m, h, "workspace"), gflags)
                if machine:
                    good, stacks = check_outputs(run_qemu(elf, machine), models)
                    ok &= good
            if label == TARGETS[0][0]:
                shared = max(macro(h, "%s_WORKSPACE_SIZE" % n) for n, _, h in models)
                print("shared workspace: %d bytes (max of %s)" % (
                    shared, ", ".join("%s %d" % (n, macro(h, "%s_WORKSPACE_SIZE" % n)) for n, _, h in models)))
            for (name, _, header), obj in zip(models, objs):
                text, rodata, _ = sizes(obj)
                ws_b = macro(header, "%s_WORKSPACE_SIZE" % name)
                est = macro(header, "%s_STACK_SIZE" % name)
                meas = stacks.get(name, -1)
                table.append(("%s %s%s" % (label, name, " (no-libm)" if no_libm else ""), text, rodata, ws_b,
                              meas, est))
                if meas > est:
                    print("FAIL: %s used %d bytes of stack, more than the header's %d" % (name, meas, est))
                    ok = False

        # 2. the first model as firmware wants it: static workspace, named sections, no libm
        mdir = mdirs[0]
        name = mdir.name
        sdir = tmp / "static"
        obj, header = compile_model(dlcc, mdir, name, sdir, [
            "--static-workspace", "--workspace-section", ".bss.dlcc_workspace",
            "--weights-section", ".rodata.dlcc_weights", "--no-libm"])
        ok &= check_undefined(obj, True)
        text, rodata, bss = sizes(obj)
        sec = run(["arm-none-eabi-objdump", "-h", str(obj)])
        for want in (".bss.dlcc_workspace", ".rodata.dlcc_weights"):
            if want not in sec:
                print("FAIL: no section %s in %s" % (want, obj.name))
                ok = False
        if bss != macro(header, "%s_WORKSPACE_SIZE" % name):
            print("FAIL: static workspace of %d bytes, header says %d" % (bss, macro(header, "%s_WORKSPACE_SIZE" % name)))
            ok = False
        print("== cortex-m4: %s with --static-workspace, run with workspace == NULL" % name)
        elf = build_image(sdir, "static", board, [(name, mdir, header)], [obj], "",
                          lambda n, m, h: model_code(n, m, h, "NULL"))
        good, st = check_outputs(run_qemu(elf), [(name, mdir, header)])
        ok &= good
        table.append(("cortex-m4 %s (static ws, no-libm)" % name, text, rodata, bss, st.get(name, -1),
                      macro(header, "%s_STACK_SIZE" % name)))

        # 3. int8: a QDQ model with --precision int8, against the interpreter bit for bit
        for qdir, fmodel, wmax, wsmax in int8:
            ok &= check_int8(dlcc, board, tmp, Path(qdir), Path(fmodel), float(wmax), float(wsmax), table)

    print("\nflash = text + rodata of the object; RAM = workspace + measured stack (-1: not run)")
    print("%-38s %7s %7s %7s %9s %7s %10s %7s" % ("target model (-O2)", "text", "rodata", "flash", "workspace",
                                                "stack", "STACK_SIZE", "RAM"))
    for name, text, rodata, ws_b, meas, est in table:
        print("%-38s %7d %7d %7d %9d %7d %10d %7d" % (name, text, rodata, text + rodata, ws_b, meas, est,
                                                    ws_b + max(meas, 0)))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def check_int8(dlcc, board, tmp, qdir, fmodel, wmax, wsmax, table):
    """The QDQ model in qdir (tests/e2e/quant_*) compiled with --precision int8 for Cortex-M4 and run
    on QEMU: its output equals `dlcc run -O2 --precision int8` on the interpreter bit for bit (the
    integer products and the requantization are exact; the float32 steps between them are each
    correctly rounded on both sides).  Its weights and workspace must be at most wmax and wsmax times
    those of the float model fmodel compiled alike (docs/firmware.md, "int8": 0.3 for the MLPerf Tiny
    DS-CNN as issue 30 asks; the e2e DS-CNN is too small for 0.3, its per-channel int32 biases and
    float32 scales weigh too much beside its 2720 weights).  The same model built for a Cortex-M4
    without an FPU (SOFT_FLOAT) has no floating-point instruction and gives the same bits."""
    tag = qdir.name
    name = "q_" + tag
    qdir_out = tmp / ("int8_" + tag)
    run([dlcc, str(qdir / "model.onnx"), "--precision", "int8"] + TRIPLE + ["--name", name, "-o", str(qdir_out)])
    obj, header = qdir_out / (name + ".o"), (qdir_out / (name + ".h")).read_text()
    fout = tmp / ("float_" + tag)
    run([dlcc, str(fmodel), "-t", "cpu"] + TRIPLE + ["--name", "f_" + tag, "-o", str(fout)])
    fheader = (fout / ("f_%s.h" % tag)).read_text()
    ok = check_undefined(obj, False)
    ref_dir = tmp / ("interp_" + tag)
    run([dlcc, "run", str(qdir / "model.onnx"), "-O2", "--precision", "int8", "-i",
         "input=" + str(qdir / "input_0.npy"), "-o", str(ref_dir)])
    stack = -1
    for fpu, triple, gflags in (("with the FPU", TRIPLE, TARGETS[0][2]), SOFT_FLOAT):
        if fpu != "with the FPU":           # the same model built for a Cortex-M4 without an FPU
            vdir = tmp / ("int8_soft_" + tag)
            run([dlcc, str(qdir / "model.onnx"), "--precision", "int8"] + triple + ["--name", name, "-o", str(vdir)])
            vobj = vdir / (name + ".o")
            vfp = [l for l in run(["arm-none-eabi-objdump", "-d", str(vobj)]).splitlines()
                   if re.match(r"^\s+[0-9a-f]+:\s+[0-9a-f ]+\s+v[a-z]", l)]
            if vfp:
                print("FAIL: the no-FPU build has floating-point instructions: %s" % vfp[0].strip())
                ok = False
        else:
            vdir, vobj = qdir_out, obj
        print("== cortex-m4 %s: %s with --precision int8, against the interpreter bit for bit" % (fpu, qdir.name))
        elf = build_image(vdir, "int8", board, [(name, qdir, header)], [vobj],
                          "static uint8_t workspace[%s_WORKSPACE_SIZE + 1] __attribute__((aligned(64)));" % name,
                          lambda n, m, h: model_code(n, m, h, "workspace"), gflags)
        text_out = run_qemu(elf)
        m = re.search(r"^RUN %s (-?\d+) (\d+)$" % name, text_out, re.M)
        if not m or int(m.group(1)) != 0:
            print("FAIL: %s_run did not return 0" % name)
            return False
        stack = int(m.group(2)) if stack < 0 else stack
        for k, out in enumerate(fields(header, name, "outputs")):
            bits = re.findall(r"^OUT %s %d ([0-9a-f]{8})$" % (name, k), text_out, re.M)
            got = np.array([int(b, 16) for b in bits], np.uint32)
            want = np.load(ref_dir / (out + ".npy")).astype(np.float32).ravel().view(np.uint32)
            if got.size != want.size or not np.array_equal(got, want):
                print("FAIL: %s output %s differs from the interpreter's: %s vs %s"
                      % (name, out, got.view(np.float32), want.view(np.float32)))
                ok = False
            else:
                print("%s output %s: %d values equal to the interpreter's bit for bit" % (name, out, got.size))
    w, fw = macro(header, name + "_WEIGHTS_SIZE"), macro(fheader, "f_%s_WEIGHTS_SIZE" % tag)
    ws, fws = macro(header, name + "_WORKSPACE_SIZE"), macro(fheader, "f_%s_WORKSPACE_SIZE" % tag)
    print("int8 / float32 %s: weights %d / %d bytes = %.3f (at most %.2f), workspace %d / %d bytes = %.3f (at "
          "most %.2f)" % (tag, w, fw, w / fw, wmax, ws, fws, ws / fws, wsmax))
    if w > wmax * fw or ws > wsmax * fws:
        print("FAIL: the int8 build's weights or workspace exceed their bound")
        ok = False
    text, rodata, _ = sizes(obj)
    table.append(("cortex-m4 %s (int8)" % tag, text, rodata, ws, stack,
                  macro(header, name + "_STACK_SIZE")))
    return ok


def nest_max(items):
    return items[0] if len(items) == 1 else "WS_MAX(%s, %s)" % (items[0], nest_max(items[1:]))


def script_main(fn):
    """Exits with fn()'s status; a failed command or a timeout is a FAIL."""
    try:
        sys.exit(fn())
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print("FAIL: %s" % e)
        sys.exit(1)


if __name__ == "__main__":
    script_main(main)
