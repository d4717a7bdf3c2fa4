#!/usr/bin/env python3
"""Synthesizability rules for the files `dlcc -t fpga` writes (docs/targets/fpga.md).

    lint_hls.py DIR NAME        # exit 1 and one line per violation

NAME.c (float32) or NAME.cpp (fixed point, ap_fixed, or streams), synthesizable part (everything before `#ifndef __SYNTHESIS__`):
  every `#pragma HLS` one of those dlcc writes, its options well formed (PIPELINE II=N, UNROLL [factor=N],
  ARRAY_PARTITION variable=V complete|cyclic factor=N dim=N, INTERFACE m_axi / s_axilite, DATAFLOW,
  STREAM variable=V depth=N), naming a variable or port of its own function, PIPELINE / UNROLL at the top
  of a loop body;
  no heap (malloc calloc realloc free), no I/O (printf puts fopen ...), no exit/abort,
  no function pointers, no recursion (call graph of the functions defined there is acyclic),
  no while / do / goto, every array has a literal size, every file-scope object is `static const`,
  every `for` has a constant trip count (`for (int64_t v = A; v < N; v++)`),
  the top function NAME_top with m_axi ports and s_axilite control; streams (hls::stream) only
  read or only written by each function, never indexed, each passed to exactly two kernel calls of
  NAME_top (one producer, one consumer) with a STREAM depth pragma.
  `#if !defined(__SYNTHESIS__)` ... `#endif` blocks inside it are C-simulation checks, not synthesized.
NAME_tb.c / NAME_tb.cpp: no heap, literal array sizes, constant-trip-count loops.
NAME.h: declarations only.  NAME.tcl: the Vitis HLS flow from project to export.
"""

import re
import sys
from pathlib import Path

HEAP = re.compile(r"\b(malloc|calloc|realloc|free|alloca)\s*\(")
IO = re.compile(r"\b(printf|fprintf|sprintf|snprintf|puts|putchar|fopen|fwrite|fread|exit|abort)\s*\(")
FNPTR = re.compile(r"\(\s*\*\s*\w*\s*\)\s*\(")
LOOP = re.compile(r"\bfor\s*\(([^;]*);([^;]*);([^)]*)\)")
CONST_LOOP = re.compile(r"^\s*int64_t (\w+) = \d+\s*;\s*(\w+) < (\d+)\s*;\s*(\w+)\+\+\s*$")
ARRAY = re.compile(r"\b(?:u?int(?:8|16|32|64)_t|float|double|int|char|dlcc_fx\d+_\d+)\s+\**(\w+)\s*\[([^\]]*)\]\s*(=|;|,|\))")
FUNC = re.compile(r"^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w \*]*?\b(\w+)\s*\(([^;{]*?)\)\s*\{", re.M)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), text, flags=re.S)
    return re.sub(r"\"(\\.|[^\"\\])*\"", "\"\"", text)


def bodies(text):
    """Function definitions: name -> body text (brace matched)."""
    out = {}
    for m in FUNC.finditer(text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out[m.group(1)] = text[m.end():i - 1]
    return out


def check_loops(text, where, errs):
    for m in LOOP.finditer(text):
        c = CONST_LOOP.match(";".join(m.groups()))
        if not c or not (c.group(1) == c.group(2) == c.group(4)):
            errs.append("%s: a loop without a constant trip count: for (%s)" % (where, ";".join(m.groups())))


def check_arrays(text, where, errs):
    for m in ARRAY.finditer(text):
        if not re.fullmatch(r"\s*\d+\s*", m.group(2)) and not re.fullmatch(r"\(?\s*\w+_WORKSPACE_SIZE \+ 7\) / 8 \+ 1",
                                                                         m.group(2)):
            errs.append("%s: array '%s' has no literal size [%s]" % (where, m.group(1), m.group(2)))


def acyclic(graph):
    state = {}

    def visit(n):
        if state.get(n) == 1:
            return False
        if state.get(n) == 2:
            return True
        state[n] = 1
        ok = all(visit(m) for m in graph[n])
        state[n] = 2
        return ok
    return all(visit(n) for n in graph)


# a stream parameter (`hls::stream<T> &s`, or an array of lanes `hls::stream<T> (&s)[N]`); a declaration
# the pragmas dlcc writes, with their options' syntax (Vitis HLS's pragma reference)
ID = r"[A-Za-z_]\w*"
PRAGMAS = [
    (re.compile(r"PIPELINE II=[1-9]\d*"), None),
    (re.compile(r"UNROLL(?: factor=[1-9]\d*)?"), None),
    (re.compile(r"ARRAY_PARTITION variable=(%s) (?:complete|(?:cyclic|block) factor=[1-9]\d*) dim=[1-9]\d*" % ID), 1),
    (re.compile(r"INTERFACE m_axi port=(%s) offset=slave bundle=%s depth=[1-9]\d*" % (ID, ID)), 1),
    (re.compile(r"INTERFACE s_axilite port=(%s|return) bundle=%s" % (ID, ID)), 1),
    (re.compile(r"DATAFLOW"), None),
    (re.compile(r"STREAM variable=(%s) depth=[1-9]\d*" % ID), 1),
]


def function_lines(synth):
    """(first line, last line, name, parameter text, body text) of each function definition."""
    out = []
    for m in FUNC.finditer(synth):
        depth, i = 1, m.end()
        while depth and i < len(synth):
            depth += {"{": 1, "}": -1}.get(synth[i], 0)
            i += 1
        out.append((synth.count("\n", 0, m.end()), synth.count("\n", 0, i), m.group(1), m.group(2), synth[m.end():i - 1]))
    return out


def check_pragmas(synth, where, errs):
    """Every `#pragma HLS` is one of PRAGMAS with well-formed options; the variable or port it names is
    declared in its function; PIPELINE and UNROLL open a loop body (the line after a `for (...) {`)."""
    lines = synth.splitlines()
    spans = function_lines(synth)
    f = 0
    for i, line in enumerate(lines):
        m = re.match(r"\s*#pragma\s+HLS\s+(.*?)\s*$", line)
        if not m:
            if re.match(r"\s*#pragma\s+(?!HLS\b)", line) and "once" not in line:
                errs.append("%s: line %d: a pragma that is not HLS: %s" % (where, i + 1, line.strip()))
            continue
        text = m.group(1)
        hit = next(((rx, g) for rx, g in PRAGMAS if rx.fullmatch(text)), None)
        if not hit:
            errs.append("%s: line %d: malformed or unknown HLS pragma: %s" % (where, i + 1, text))
            continue
        rx, g = hit
        while f < len(spans) and spans[f][1] < i:
            f += 1
        inside = f < len(spans) and spans[f][0] <= i <= spans[f][1]
        if g:
            name = rx.fullmatch(text).group(g)
            decl = (spans[f][3] + "\n" + spans[f][4].replace(line, "")) if inside else ""
            if name != "return" and not re.search(r"\b%s\b" % name, decl):
                errs.append("%s: line %d: pragma names '%s', which its function does not declare" % (where, i + 1, name))
        if text.startswith(("PIPELINE", "UNROLL")):
            prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            if not re.search(r"\bfor\s*\(.*\)\s*\{\s*$", prev):
                errs.append("%s: line %d: %s outside the top of a loop body" % (where, i + 1, text.split()[0]))


STREAM_PARAM = re.compile(r"hls::stream<.*?>\s*\(?\s*&\s*(\w+)\s*\)?\s*(?:\[\s*\d+\s*\])?")
STREAM_DECL = re.compile(r"hls::stream<.*?>\s+(\w+)\s*[\(\[;]")


def check_streams(synth, funcs, top, where, errs):
    """Each function only reads or only writes a stream parameter, with .read() / .write(); NAME_top's
    streams have a depth and go to one producer call and one consumer call."""
    for m in FUNC.finditer(synth):
        body = funcs.get(m.group(1), "")
        for s in STREAM_PARAM.findall(m.group(2)):
            uses = re.findall(r"\b%s\b(?:\s*\[[^\]]*\])?(\s*\.\s*\w+\s*\(|\s*\[)?" % s, body)
            kinds = set(u.replace(" ", "") for u in uses)
            if kinds - {".read(", ".write("}:
                errs.append("%s: stream '%s' in %s used other than by read() / write(): %s" % (
                    where, s, m.group(1), sorted(kinds)))
            if {".read(", ".write("} <= kinds:
                errs.append("%s: %s both reads and writes stream '%s'" % (where, m.group(1), s))
    if not top:
        return
    body = funcs.get(top.group(0).split("(")[0].split()[-1], "")
    calls = re.findall(r"^\s*\w+\(([^;]*)\);", body, re.M)
    for s in STREAM_DECL.findall(body):
        n = sum(1 for c in calls if re.search(r"\b%s\b" % s, c))
        if n != 2:
            errs.append("%s: stream '%s' is passed to %d kernel calls, not 2 (one producer, one consumer)" % (
                where, s, n))
        if not re.search(r"#pragma HLS STREAM variable=%s depth=\d+" % s, body):
            errs.append("%s: stream '%s' has no STREAM depth pragma" % (where, s))


def lint(folder, name):
    folder = Path(folder)
    errs = []
    x = "cpp" if (folder / (name + ".cpp")).exists() else "c"
    src = strip_comments((folder / (name + "." + x)).read_text())
    if "#ifndef __SYNTHESIS__" not in src:
        errs.append("%s.%s: no host wrapper under #ifndef __SYNTHESIS__" % (name, x))
    synth = src.split("#ifndef __SYNTHESIS__")[0]
    synth = re.sub(r"#if !defined\(__SYNTHESIS__\).*?#endif", "", synth, flags=re.S)
    where = name + "." + x + " (synthesizable part)"
    for rx, what in ((HEAP, "heap"), (IO, "I/O or exit"), (FNPTR, "a function pointer")):
        for m in rx.finditer(synth):
            errs.append("%s: %s: %s" % (where, what, m.group(0)))
    for kw in ("while", "goto", "do"):
        if re.search(r"\b%s\b" % kw, synth):
            errs.append("%s: '%s'" % (where, kw))
    check_loops(synth, where, errs)
    check_arrays(synth, where, errs)
    funcs = bodies(synth)
    graph = {f: [g for g in funcs if g != f and re.search(r"\b%s\s*\(" % g, body)] for f, body in funcs.items()}
    for f, body in funcs.items():
        if re.search(r"\b%s\s*\(" % f, body):
            graph[f].append(f)
    if not acyclic(graph):
        errs.append("%s: recursion in the call graph" % where)
    # file scope: everything outside function bodies
    scope, depth = [], 0
    for ch in synth:
        depth += ch == "{"
        if depth == 0:
            scope.append(ch)
        depth -= ch == "}"
        if ch == "}" and depth == 0:
            scope.append(";")      # a function body ends a file-scope item like a ';'
    scope = "\n".join(line for line in "".join(scope).splitlines() if not line.lstrip().startswith("#"))
    for decl in scope.split(";"):
        decl = decl.strip()
        if "=" in decl and not decl.startswith("static const") and not decl.startswith("static_assert"):
            errs.append("%s: writable file-scope data: %s" % (where, decl[:60]))
    top = re.search(r"void %s_top\(([^)]*)\)\s*\{" % name, synth)
    if not top:
        errs.append("%s: no top function %s_top" % (where, name))
    elif "#pragma HLS INTERFACE s_axilite port=return" not in synth:
        errs.append("%s: the top function has no s_axilite control interface" % where)
    elif top.group(1).strip() != "void" and "#pragma HLS INTERFACE m_axi" not in synth:
        errs.append("%s: the top function's ports are not m_axi" % where)
    check_streams(synth, funcs, top, where, errs)
    check_pragmas(synth, where, errs)
    tb = strip_comments((folder / (name + "_tb." + x)).read_text())
    for m in HEAP.finditer(tb):
        errs.append("%s_tb.%s: heap: %s" % (name, x, m.group(0)))
    check_loops(tb, name + "_tb." + x, errs)
    check_arrays(tb, name + "_tb." + x, errs)
    hdr = strip_comments((folder / (name + ".h")).read_text())
    if re.search(r"\)\s*\{", hdr) or HEAP.search(hdr):
        errs.append("%s.h: holds code" % name)
    tcl = (folder / (name + ".tcl")).read_text()
    for step in ("open_project", "set_top %s_top" % name, "add_files %s.%s" % (name, x), "add_files -tb %s_tb.%s" % (name, x),
                 "open_solution", "set_part", "create_clock -period", "csim_design", "csynth_design",
                 "cosim_design", "export_design"):
        if step not in tcl:
            errs.append("%s.tcl: no '%s'" % (name, step))
    return errs


if __name__ == "__main__":
    problems = lint(sys.argv[1], sys.argv[2])
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)
