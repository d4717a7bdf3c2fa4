#!/usr/bin/env python3
"""Tests run_e2e.py itself with stand-ins for `dlcc run`, so the e2e driver is known
to pass, fail and explain correctly independently of dlcc.

    test_driver.py MODEL_DIR        (a folder written by export_models.py)
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# A stand-in dlcc: parses `run MODEL -i N=F ... -o OUTDIR` and, per MODE, writes
# OUTDIR/output.npy from the reference output (optionally altered) or fails.
FAKE = r'''#!%(python)s
import sys, numpy as np
from pathlib import Path
args = sys.argv[1:]
assert args[0] == "run" and args[1].endswith("model.json"), args
assert args[2] == "-i" and args[3].startswith("input=") and Path(args[3][6:]).is_file(), args
out = Path(args[args.index("-o") + 1])
ref = np.load(Path(args[1]).parent / "output_0.npy")
mode = "%(mode)s"
if mode == "error":
    sys.stderr.write("dlcc: model.json:3:4: error: something specific\n")
    sys.exit(1)
out.mkdir(parents=True)
if mode == "exact":
    np.save(out / "output.npy", ref)
elif mode == "within":        # 0.5 * tolerance everywhere
    np.save(out / "output.npy", (ref + 0.5 * (1e-4 + 1e-3 * np.abs(ref))).astype(np.float32))
elif mode == "beyond":        # one element off by 1e-2
    bad = ref.copy(); bad.flat[3] += 1e-2; np.save(out / "output.npy", bad)
elif mode == "nan":
    bad = ref.copy(); bad.flat[0] = np.nan; np.save(out / "output.npy", bad)
elif mode == "shape":
    np.save(out / "output.npy", ref.reshape(-1))
elif mode == "dtype":
    np.save(out / "output.npy", ref.astype(np.float64))
elif mode == "missing":
    np.save(out / "other.npy", ref)
'''

# mode: (expected exit status, substrings the driver's output must contain)
CASES = {
    "exact": (0, ["ok   output:", "max abs err 0.000e+00", "PASS"]),
    "within": (0, ["ok   output:", "0 of", "PASS"]),
    "beyond": (1, ["FAIL output:", "1 of", "worst at", "FAIL"]),
    "nan": (1, ["FAIL output:", "1 NaN"]),
    "shape": (1, ["FAIL output: shape"]),
    "dtype": (1, ["FAIL output: dtype float64, expected float32"]),
    "error": (1, ["dlcc run exited with status 1", "dlcc: model.json:3:4: error: something specific"]),
    "missing": (1, ["wrote no output.npy (OUTDIR has: other.npy)"]),
}


def main():
    model_dir = Path(sys.argv[1])
    failures = 0
    with tempfile.TemporaryDirectory(prefix="dlcc-e2e-driver-") as tmp:
        for mode, (status, needles) in CASES.items():
            fake = Path(tmp) / ("dlcc_" + mode)
            fake.write_text(FAKE % {"python": sys.executable, "mode": mode})
            os.chmod(fake, 0o755)
            p = subprocess.run([sys.executable, str(HERE / "run_e2e.py"), str(fake), str(model_dir)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            text = p.stdout.decode("utf-8", "replace")
            missing = [s for s in needles if s not in text]
            if p.returncode != status or missing:
                failures += 1
                print("FAIL %s: exit %d (expected %d), missing %s; driver said:\n%s" % (
                    mode, p.returncode, status, missing, text))
            else:
                print("ok   %s" % mode)
    print("%d of %d driver cases passed" % (len(CASES) - failures, len(CASES)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
