#!/usr/bin/env python3
"""The synthesizability linter itself: a generated folder passes, and each
rule catches one injected violation.

    test_lint.py DLCC MODEL_DIR [STREAM_MODEL_DIR]

STREAM_MODEL_DIR (a model whose design has hls::stream FIFOs) adds the stream rules' cases.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lint_hls import lint  # noqa: E402

# (what, text to find in m.c, replacement, expected message substring)
CASES = [
    ("heap", "void m_top(", "static float *m_grab(void) { return malloc(4); }\nvoid m_top(", "heap: malloc("),
    ("printf", "void m_top(", "static void m_say(void) { printf(\"x\"); }\nvoid m_top(", "I/O or exit"),
    ("function pointer", "void m_top(", "static void (*m_fp)(void);\nvoid m_top(", "a function pointer"),
    ("recursion", "void m_top(", "static int m_f(int n) { return n ? m_f(n - 1) : 0; }\nvoid m_top(", "recursion"),
    ("while", "void m_top(", "static int m_w(int n) { while (n) n--; return n; }\nvoid m_top(", "'while'"),
    ("variable trip count", "void m_top(",
     "static int m_v(int64_t n) { int s = 0; for (int64_t i = 0; i < n; i++) s++; return s; }\nvoid m_top(",
     "a loop without a constant trip count"),
    ("variable-size array", "void m_top(", "static void m_a(int n) { float x[n]; (void)x; }\nvoid m_top(",
     "array 'x' has no literal size"),
    ("writable global", "void m_top(", "static int m_count = 0;\nvoid m_top(", "writable file-scope data"),
    ("no control interface", "#pragma HLS INTERFACE s_axilite port=return", "", "no s_axilite control"),
    ("misspelled pragma", "#pragma HLS PIPELINE II=", "#pragma HLS PIPELIN II=", "malformed or unknown HLS pragma"),
    ("bad pragma option", "#pragma HLS PIPELINE II=", "#pragma HLS PIPELINE II=x", "malformed or unknown HLS pragma"),
    ("partition of an unknown array", "#pragma HLS ARRAY_PARTITION variable=",
     "#pragma HLS ARRAY_PARTITION variable=nowhere_", "which its function does not declare"),
    ("pipeline outside a loop", "void m_top(", "static void m_p(void)\n{\n    int a = 0;\n    #pragma HLS PIPELINE II=1\n"
     "    (void)a;\n}\nvoid m_top(", "PIPELINE outside the top of a loop body"),
]
# the same on a design with streams (m.cpp)
STREAM_CASES = [
    ("a stream read and written by one function", "void m_top(",
     "static void m_rw(hls::stream<float> &s) { s.write(s.read()); }\nvoid m_top(", "both reads and writes stream 's'"),
    ("a stream indexed like an array", "void m_top(",
     "static float m_ix(hls::stream<float> &s) { return s[0]; }\nvoid m_top(", "used other than by read() / write()"),
    ("a stream without a depth", "#pragma HLS STREAM variable=", "#pragma HLS XSTREAM variable=",
     "has no STREAM depth pragma"),
    ("a stream no kernel gets", "#pragma HLS DATAFLOW\n", "#pragma HLS DATAFLOW\n    hls::stream<float> t_idle;\n",
     "stream 't_idle' is passed to 0 kernel calls"),
]


def main():
    dlcc = sys.argv[1]
    failed = 0
    runs = [(Path(sys.argv[2]), "c", CASES)] + ([(Path(sys.argv[3]), "cpp", STREAM_CASES)] if len(sys.argv) > 3 else [])
    with tempfile.TemporaryDirectory(prefix="dlcc-lint-") as tmp:
        for model, x, cases in runs:
            good = Path(tmp) / ("good_" + x)
            p = subprocess.run([dlcc, str(model / "model.json"), "-t", "fpga", "-o", str(good), "--name", "m"],
                               capture_output=True, text=True)
            if p.returncode or not (good / ("m." + x)).exists():
                print("FAIL: dlcc did not write m.%s: %s" % (x, p.stderr))
                return 1
            errs = lint(good, "m")
            print("%s generated folder (m.%s): %s" % ("ok  " if not errs else "FAIL", x, errs or "no violations"))
            failed += bool(errs)
            for what, find, repl, want in cases:
                bad = Path(tmp) / "bad"
                shutil.rmtree(bad, ignore_errors=True)
                shutil.copytree(good, bad)
                src = (bad / ("m." + x)).read_text()
                assert find in src, find
                (bad / ("m." + x)).write_text(src.replace(find, repl, 1))
                errs = lint(bad, "m")
                ok = any(want in e for e in errs)
                print("%s %s: %s" % ("ok  " if ok else "FAIL", what, errs))
                failed += not ok
    print("PASS" if not failed else "FAIL")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
