#!/usr/bin/env python3
"""The synthesizability linter itself: a generated folder passes, and each
rule catches one injected violation.

    test_lint.py DLCC MODEL_DIR
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
]


def main():
    dlcc, model = sys.argv[1], Path(sys.argv[2])
    failed = 0
    with tempfile.TemporaryDirectory(prefix="dlcc-lint-") as tmp:
        good = Path(tmp) / "good"
        p = subprocess.run([dlcc, str(model / "model.json"), "-t", "fpga", "-o", str(good), "--name", "m"],
                           capture_output=True, text=True)
        if p.returncode:
            print("FAIL: dlcc: " + p.stderr)
            return 1
        errs = lint(good, "m")
        print("%s generated folder: %s" % ("ok  " if not errs else "FAIL", errs or "no violations"))
        failed += bool(errs)
        for what, find, repl, want in CASES:
            bad = Path(tmp) / "bad"
            shutil.rmtree(bad, ignore_errors=True)
            shutil.copytree(good, bad)
            src = (bad / "m.c").read_text()
            assert find in src, find
            (bad / "m.c").write_text(src.replace(find, repl, 1))
            errs = lint(bad, "m")
            ok = any(want in e for e in errs)
            print("%s %s: %s" % ("ok  " if ok else "FAIL", what, errs))
            failed += not ok
    print("PASS" if not failed else "FAIL")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
