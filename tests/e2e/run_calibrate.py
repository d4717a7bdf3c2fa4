#!/usr/bin/env python3
"""Post-training quantization of a float e2e model (`--precision int8 --calibrate DIR`) against the float
model, on 200 inputs.

    run_calibrate.py DLCC CC MODEL_DIR

Calibration: 32 standard-normal samples (seed 0) of the model's input, written as .npy files into a
temporary folder.  Evaluation: 200 other standard-normal inputs (seed 1).  The float model and the
int8 one are compiled to objects for the host (`dlcc MODEL --name m`, and with `--precision int8
--calibrate DIR`) and linked with a C driver that runs every input through m_run_ptrs.  Checked:

- top-1 (the arg max of the output) of the int8 model equals the float model's on at least 95% of the
  200 inputs (issue 30's bar for `dlcc quantize` on the e2e CNNs); the agreement is printed as the
  accuracy drop against the float model taken as the reference;
- the int8 object's weights are at most 0.36x the float one's (int8 weights, int32 biases, float32
  scales per channel: the e2e models' channels are few, so not the 0.25 of the weights alone);
- `dlcc run --precision int8 --calibrate DIR` on the interpreter gives the int8 object's output for
  the model's own input_0.npy (the same quantized graph on both): bit for bit where the graph ends in
  its last DequantizeLinear, within 1e-6 relative where float operators follow it (the mlp's
  softmax: the interpreter's expf and the object's differ in the last bit).

- `dlcc quantize MODEL --calibrate DIR -o q.onnx` writes that quantized model as ONNX: it passes
  onnx.checker (full check, where the onnx module is installed), and `dlcc run q.onnx --precision int8`
  gives the interpreter's output above bit for bit (the same graph read back).

Exit status: 0 pass, 1 fail.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

N_CALIB, N_EVAL = 32, 200

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "m.h"

int main(int argc, char **argv)
{
    static unsigned char in[@IN@], out[@OUT@];
    static unsigned char ws[m_WORKSPACE_SIZE + 1] __attribute__((aligned(64)));
    FILE *fi = fopen(argv[1], "rb"), *fo = fopen(argv[2], "wb");
    int n = atoi(argv[3]);
    if (!fi || !fo)
        return 2;
    const void *ins[1] = { in };
    void *outs[1] = { out };
    for (int i = 0; i < n; i++) {
        if (fread(in, 1, sizeof in, fi) != sizeof in)
            return 3;
        if (m_run_ptrs(ins, outs, ws) != m_OK)
            return 4;
        fwrite(out, 1, sizeof out, fo);
    }
    return fclose(fo) != 0;
}
"""


def run(cmd):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("$ %s\nexit %d\n%s%s" % (" ".join(map(str, cmd)), p.returncode, p.stdout, p.stderr))
    return p.stdout


def build(dlcc, cc, model, out, extra):
    run([dlcc, model, "--name", "m", "-o", out] + extra)
    h = open(os.path.join(out, "m.h")).read()
    if int(re.search(r"#define m_NUM_INPUTS (\d+)", h).group(1)) != 1 or \
       int(re.search(r"#define m_NUM_OUTPUTS (\d+)", h).group(1)) != 1:
        raise RuntimeError("the driver takes one input and one output")
    inb = re.search(r"#define m_INPUT_\w+_BYTES (\d+)", h).group(1)
    outb = re.search(r"#define m_OUTPUT_\w+_BYTES (\d+)", h).group(1)
    with open(os.path.join(out, "driver.c"), "w") as f:
        f.write(DRIVER.replace("@IN@", inb).replace("@OUT@", outb))
    exe = os.path.join(out, "driver")
    run([cc, "-std=c11", "-O2", "-I", out, os.path.join(out, "driver.c"), os.path.join(out, "m.o"), "-lm", "-o", exe])
    return exe, int(re.search(r"#define m_WEIGHTS_SIZE (\d+)", h).group(1))


def main():
    dlcc, cc, mdir = sys.argv[1], sys.argv[2], sys.argv[3]
    model = [os.path.join(mdir, f) for f in ("model.json", "model.onnx") if os.path.exists(os.path.join(mdir, f))][0]
    x0 = np.load(os.path.join(mdir, "input_0.npy"))
    ok = True
    with tempfile.TemporaryDirectory(prefix="dlcc-calibrate-") as tmp:
        cal = os.path.join(tmp, "calib")
        os.makedirs(cal)
        rng = np.random.default_rng(0)
        for i in range(N_CALIB):
            np.save(os.path.join(cal, "s%03d.npy" % i), rng.standard_normal(x0.shape).astype(x0.dtype))
        xs = np.random.default_rng(1).standard_normal((N_EVAL,) + x0.shape).astype(x0.dtype)
        xs[0] = x0
        xs.tofile(os.path.join(tmp, "inputs.bin"))
        ys = {}
        wbytes = {}
        for tag, extra in (("float", []), ("int8", ["--precision", "int8", "--calibrate", cal]),
                           ("int8 percentile", ["--precision", "int8", "--calibrate", cal, "--calibration",
                                                "percentile"])):
            out = os.path.join(tmp, tag.replace(" ", "_"))
            exe, wbytes[tag] = build(dlcc, cc, model, out, extra)
            run([exe, os.path.join(tmp, "inputs.bin"), os.path.join(out, "outputs.bin"), N_EVAL])
            ys[tag] = np.fromfile(os.path.join(out, "outputs.bin"), np.float32).reshape(N_EVAL, -1)
        agree_p = float(np.mean(ys["float"].argmax(1) == ys["int8 percentile"].argmax(1)))
        print("%s with --calibration percentile (99.999): top-1 equal to float on %.1f%%"
              % (os.path.basename(mdir), agree_p * 100))
        if agree_p < 0.95:
            print("FAIL: under 95% top-1 agreement with percentile calibration")
            ok = False
        agree = float(np.mean(ys["float"].argmax(1) == ys["int8"].argmax(1)))
        rel = float(np.abs(ys["int8"] - ys["float"]).max() / np.abs(ys["float"]).max())
        print("%s: int8 top-1 equal to float on %d of %d inputs (%.1f%%; accuracy drop %.1f points against "
              "the float model), max |int8 - float| %.3f of max |float|"
              % (os.path.basename(mdir), round(agree * N_EVAL), N_EVAL, agree * 100, (1 - agree) * 100, rel))
        if agree < 0.95:
            print("FAIL: under 95% top-1 agreement")
            ok = False
        print("weights: int8 %d bytes, float %d bytes (%.3f)" % (wbytes["int8"], wbytes["float"],
                                                                 wbytes["int8"] / wbytes["float"]))
        if wbytes["int8"] > 0.36 * wbytes["float"]:
            print("FAIL: the int8 weights are over 0.36x the float ones")
            ok = False
        interp = os.path.join(tmp, "interp")
        run([dlcc, "run", model, "-O2", "--precision", "int8", "--calibrate", cal, "-i",
             "input=" + os.path.join(mdir, "input_0.npy"), "-o", interp])
        got = np.load(os.path.join(interp, [f for f in os.listdir(interp) if f.endswith(".npy")][0]))
        same = np.array_equal(got.ravel().view(np.uint32), ys["int8"][0].view(np.uint32))
        if not same and not np.allclose(got.ravel(), ys["int8"][0], rtol=1e-6, atol=1e-7):
            print("FAIL: the interpreter and the int8 object differ on input_0.npy:\n%s\n%s" % (got.ravel(),
                                                                                             ys["int8"][0]))
            ok = False
        else:
            print("interpreter and int8 object on input_0.npy: %s" % ("bit for bit equal" if same else
                                                                     "equal within 1e-6 relative"))
        qm = os.path.join(tmp, "q.onnx")
        run([dlcc, "quantize", model, "--calibrate", cal, "-o", qm])
        try:
            import onnx
            written = onnx.load(qm)
            if onnx.IR_VERSION < written.ir_version:
                print("dlcc quantize: onnx %s reads IR versions up to %d, the model is %d: the checker did not run"
                      % (onnx.__version__, onnx.IR_VERSION, written.ir_version))
            else:
                onnx.checker.check_model(written, full_check=True)
                print("dlcc quantize: %s passes onnx.checker" % os.path.basename(qm))
        except ImportError:
            print("dlcc quantize: onnx not installed, the checker did not run")
        back = os.path.join(tmp, "back")
        run([dlcc, "run", qm, "-O2", "--precision", "int8", "-i", "input=" + os.path.join(mdir, "input_0.npy"),
             "-o", back])
        again = np.load(os.path.join(back, [f for f in os.listdir(back) if f.endswith(".npy")][0]))
        if not np.array_equal(again.view(np.uint32), got.view(np.uint32)):
            print("FAIL: the model dlcc quantize wrote runs differently:\n%s\n%s" % (again.ravel(), got.ravel()))
            ok = False
        else:
            print("dlcc quantize's model read back: equal to --calibrate bit for bit")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
