/* codegen/hls.c — Vitis HLS C from the loop IR: the pragmas (as hooks of
 * the C emitter, codegen/c_emit.c), the top function and the host wrapper. */
#include "codegen/c_emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void indent(UtilBuf *o, int n)
{
    for (int i = 0; i < n; i++)
        util_buf_put(o, "    ", 4);
}

static void hls_loop_pragmas(const CgCTarget *t, const LoopProgram *p, int kernel, const LoopStmt *loop,
                             UtilBuf *out, int ind)
{
    (void)t;
    (void)p;
    (void)kernel;
    switch (loop->u.loop.kind) {
    case LOOP_HLS_PIPELINE:
        indent(out, ind);
        util_buf_printf(out, "#pragma HLS PIPELINE II=%d\n", loop->u.loop.factor > 0 ? loop->u.loop.factor : 1);
        break;
    case LOOP_UNROLLED:
        indent(out, ind);
        if (loop->u.loop.factor > 0)
            util_buf_printf(out, "#pragma HLS UNROLL factor=%d\n", loop->u.loop.factor);
        else
            util_buf_printf(out, "#pragma HLS UNROLL\n");
        break;
    default: break;
    }
}

static void hls_array_pragmas(const CgCTarget *t, const LoopProgram *p, int b, const char *var, UtilBuf *out,
                              int ind)
{
    (void)t;
    const LoopBuf *bf = &p->bufs[cg_c_root(p, b)];
    int64_t n = ir_shape_numel(&bf->shape);
    if (bf->partition <= 1)
        return;
    indent(out, ind);
    if (bf->partition >= n)
        util_buf_printf(out, "#pragma HLS ARRAY_PARTITION variable=%s complete dim=1\n", var);
    else
        util_buf_printf(out, "#pragma HLS ARRAY_PARTITION variable=%s cyclic factor=%d dim=1\n", var,
                        bf->partition);
}

int cg_hls_has_streams(const LoopProgram *p)
{
    for (int b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].stream)
            return 1;
    return 0;
}

int cg_hls_dataflow_ok(const LoopProgram *p, const char **why)
{
    int n = p->n_bufs ? p->n_bufs : 1;
    int *writers = calloc((size_t)n, sizeof *writers), *readers = calloc((size_t)n, sizeof *readers);
    int *last_w = malloc((size_t)n * sizeof *last_w);
    unsigned char *used = malloc((size_t)n);
    int ok = writers && readers && last_w && used;
    *why = ok ? NULL : "out of memory";
    for (int b = 0; ok && b < p->n_bufs; b++)
        last_w[b] = -1;
    for (int k = 0; ok && k < p->n_kernels; k++) {
        cg_c_kernel_uses(p, k, used);
        for (int b = 0; b < p->n_bufs && ok; b++) {
            if (!used[b] || p->bufs[b].storage == LOOP_ST_CONST || p->bufs[b].storage == LOOP_ST_LOCAL)
                continue;
            if (used[b] == 3) {
                ok = 0;
                *why = p->bufs[b].name;        /* read and written by one kernel */
            }
            if (used[b] & 2) {
                writers[b]++;
                last_w[b] = k;
            }
            if (used[b] & 1)
                readers[b]++;
        }
    }
    for (int b = 0; ok && b < p->n_bufs; b++) {
        if (p->bufs[b].alias_of >= 0 || p->bufs[b].storage == LOOP_ST_CONST || p->bufs[b].storage == LOOP_ST_LOCAL)
            continue;
        LoopStorage st = p->bufs[b].storage;
        if (st == LOOP_ST_WORKSPACE && writers[b] == 0 && readers[b] == 0)
            continue;                        /* unused (e.g. fused away) */
        int bad = st == LOOP_ST_WORKSPACE && p->bufs[b].offchip && (writers[b] || readers[b]) ? 1
                : st == LOOP_ST_INPUT ? readers[b] > 1
                : st == LOOP_ST_OUTPUT ? writers[b] > 1 || readers[b] > 0
                : writers[b] != 1 || readers[b] > 1;
        if (bad) {
            ok = 0;
            *why = p->bufs[b].name;
        }
    }
    free(writers);
    free(readers);
    free(last_w);
    free(used);
    return ok;
}

/* The ports of the top function: model inputs then outputs, by position;
 * then the weight arrays and the intermediates in external memory
 * (LoopBuf.offchip), by buffer id. */
static int port_list(const LoopProgram *p, int *ports)
{
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        LoopStorage st = pass ? LOOP_ST_OUTPUT : LOOP_ST_INPUT;
        int count = pass ? p->n_outputs : p->n_inputs;
        for (int i = 0; i < count; i++)
            for (int b = 0; b < p->n_bufs; b++)
                if (p->bufs[b].storage == st && p->bufs[b].alias_of < 0 && p->bufs[b].index == i) {
                    ports[n++] = b;
                    break;
                }
    }
    for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < p->n_bufs; b++)
            if (p->bufs[b].offchip && p->bufs[b].alias_of < 0 &&
                p->bufs[b].storage == (pass ? LOOP_ST_WORKSPACE : LOOP_ST_CONST))
                ports[n++] = b;
    return n;
}

/* Read-only ports: model inputs and weights. */
static const char *port_const(const LoopProgram *p, int b)
{
    return p->bufs[b].storage == LOOP_ST_INPUT || p->bufs[b].storage == LOOP_ST_CONST ? "const " : "";
}

/* The AXI bundle of a port: one per model input / output, one for all the
 * off-chip weights (wmem), one for the off-chip intermediates (amem). */
static void port_bundle(const LoopProgram *p, int b, int i, char *out, size_t n)
{
    if (p->bufs[b].storage == LOOP_ST_CONST)
        snprintf(out, n, "wmem");
    else if (p->bufs[b].storage == LOOP_ST_WORKSPACE)
        snprintf(out, n, "amem");
    else
        snprintf(out, n, "gmem%d", i);
}

static void top_function(const CgCTarget *t, const LoopProgram *p, const int *ports, int np, int dataflow,
                         const char *why, UtilBuf *out)
{
    char name[160];
    unsigned char *used = calloc((size_t)p->n_bufs + 1, 1), *one = malloc((size_t)p->n_bufs + 1);
    for (int k = 0; used && one && k < p->n_kernels; k++) {
        cg_c_kernel_uses(p, k, one);
        for (int b = 0; b < p->n_bufs; b++)
            used[b] |= one[b];
    }
    util_buf_printf(out, "/* The top function: synthesize with set_top %s_top. */\nvoid %s_top(", t->name, t->name);
    for (int i = 0; i < np; i++) {
        cg_c_buf_name(p, ports[i], name, sizeof name);
        util_buf_printf(out, "%s%s%s %s[%lld]", i ? ", " : "", port_const(p, ports[i]),
                        cg_c_buf_type(t, p, ports[i]).s, name, (long long)ir_shape_numel(&p->bufs[ports[i]].shape));
    }
    util_buf_printf(out, "%s)\n{\n", np ? "" : "void");
    for (int i = 0; i < np; i++) {
        char bundle[32];
        cg_c_buf_name(p, ports[i], name, sizeof name);
        port_bundle(p, ports[i], i, bundle, sizeof bundle);
        util_buf_printf(out, "#pragma HLS INTERFACE m_axi port=%s offset=slave bundle=%s depth=%lld\n", name, bundle,
                        (long long)ir_shape_numel(&p->bufs[ports[i]].shape));
        util_buf_printf(out, "#pragma HLS INTERFACE s_axilite port=%s bundle=control\n", name);
    }
    util_buf_printf(out, "#pragma HLS INTERFACE s_axilite port=return bundle=control\n");
    if (dataflow)
        util_buf_printf(out, "#pragma HLS DATAFLOW\n");
    else {
        int ext = 0;
        for (int b = 0; why && b < p->n_bufs; b++)
            ext |= p->bufs[b].name == why && p->bufs[b].offchip;
        util_buf_printf(out, "    /* no DATAFLOW: buffer '%s' %s */\n", why ? why : "?",
                        ext ? "is in external memory (the layers pass it through DDR / HBM)"
                            : "does not have exactly one producer and one consumer kernel");
    }
    for (int b = 0; b < p->n_bufs; b++) {
        if (p->bufs[b].storage != LOOP_ST_WORKSPACE || p->bufs[b].alias_of >= 0 || p->bufs[b].offchip ||
            (used && !used[b]))
            continue;
        cg_c_buf_name(p, b, name, sizeof name);
        if (p->bufs[b].stream && p->bufs[b].stream_lanes > 1) {   /* one FIFO per channel */
            util_buf_printf(out, "    hls::stream<%s> %s[%d];\n", cg_c_buf_type(t, p, b).s, name, p->bufs[b].stream_lanes);
            util_buf_printf(out, "#pragma HLS STREAM variable=%s depth=%lld\n", name, (long long)p->bufs[b].stream);
            continue;
        }
        if (p->bufs[b].stream) {            /* a FIFO between its producer and its consumer */
            util_buf_printf(out, "    hls::stream<%s> %s(\"%s\");\n", cg_c_buf_type(t, p, b).s, name, name);
            util_buf_printf(out, "#pragma HLS STREAM variable=%s depth=%lld\n", name, (long long)p->bufs[b].stream);
            continue;
        }
        util_buf_printf(out, "    %s %s[%lld];\n", cg_c_buf_type(t, p, b).s, name,
                        (long long)ir_shape_numel(&p->bufs[b].shape));
        hls_array_pragmas(t, p, b, name, out, 1);
    }
    for (int k = 0; k < p->n_kernels; k++)
        cg_c_emit_call(t, p, k, out, 1);
    if (cg_hls_has_streams(p)) {
        util_buf_printf(out, "#if !defined(__SYNTHESIS__)\n    /* C simulation only: every stream is read as often as it is written */\n");
        for (int b = 0; b < p->n_bufs; b++) {
            if (!p->bufs[b].stream || p->bufs[b].alias_of >= 0 || (used && !used[b]))
                continue;
            cg_c_buf_name(p, b, name, sizeof name);
            int L = p->bufs[b].stream_lanes > 1 ? p->bufs[b].stream_lanes : 1;
            char ref[200];
            snprintf(ref, sizeof ref, L > 1 ? "%s[l]" : "%s", name);
            util_buf_printf(out, "    for (int l = 0; l < %d; l++)\n        if (%s.size() != 0)\n            printf(\"%s_top: "
                                 "ERROR: stream '%s'%s holds %%d values no layer read (unbalanced reads and "
                                 "writes)\\n\", %s(int)%s.size());\n", L, ref, t->name, name, L > 1 ? " lane %d" : "",
                            L > 1 ? "l, " : "", ref);
        }
        util_buf_printf(out, "#endif\n");
    }
    util_buf_printf(out, "}\n\n");
    free(used);
    free(one);
}

static int is_fixed_port(const CgHlsOptions *o, const LoopProgram *p, int b)
{
    return o->fmt && ir_dtype_is_float(p->bufs[b].dtype) && o->fmt[b].w > 0;
}

static void host_wrapper(const CgCTarget *t, const CgHlsOptions *o, const LoopProgram *p, const int *ports, int np,
                         UtilBuf *out)
{
    const char *N = o->name;
    char name[160];
    util_buf_printf(out, "#ifndef __SYNTHESIS__\n/* Host wrapper (NAME_run, as on every dlcc target): float in, float out; "
                         "not synthesized. */\n");
    for (int i = 0; i < np; i++)
        if (p->bufs[ports[i]].storage == LOOP_ST_CONST) {
            if (i == 0 || p->bufs[ports[i - 1]].storage != LOOP_ST_CONST)
                util_buf_printf(out, "/* The weights in external memory (m_axi bundle wmem): a host program copies "
                                     "these arrays to the device buffers it passes to %s_top. */\n", N);
            cg_c_emit_const(t, p, ports[i], out);
        }
    util_buf_printf(out, "int32_t %s_run_ptrs(const void *const inputs[], void *const outputs[], void *workspace)\n{\n",
                    N);
    util_buf_printf(out, "    if (!inputs || !outputs) return %s_ERR_NULL;\n", N);
    util_buf_printf(out, "    for (int i = 0; i < %s_NUM_INPUTS; i++) if (!inputs[i]) return %s_ERR_NULL;\n", N, N);
    util_buf_printf(out, "    for (int i = 0; i < %s_NUM_OUTPUTS; i++) if (!outputs[i]) return %s_ERR_NULL;\n", N, N);
    util_buf_printf(out, "    if (%s_WORKSPACE_SIZE > 0 && !workspace) return %s_ERR_NULL;\n", N, N);
    util_buf_printf(out, "    (void)workspace;\n");
    for (int i = 0; i < np; i++) {
        int b = ports[i], in = p->bufs[b].storage == LOOP_ST_INPUT;
        int64_t n = ir_shape_numel(&p->bufs[b].shape);
        CgCType tys = cg_c_buf_type(t, p, b);
        const char *ty = tys.s;
        cg_c_buf_name(p, b, name, sizeof name);
        if (p->bufs[b].storage == LOOP_ST_CONST)
            continue;                  /* the array above */
        if (p->bufs[b].storage == LOOP_ST_WORKSPACE) {   /* external memory: a slice of the workspace */
            util_buf_printf(out, "    %s *%s = (%s *)((char *)workspace + %lld);\n", ty, name, ty,
                            (long long)o->io_offset[b]);
            continue;
        }
        if (!is_fixed_port(o, p, b)) {
            util_buf_printf(out, "    %s%s *%s = (%s%s *)%s[%d];\n", in ? "const " : "", ty, name, in ? "const " : "",
                            ty, in ? "inputs" : "outputs", p->bufs[b].index);
            continue;
        }
        util_buf_printf(out, "    %s *%s = (%s *)((char *)workspace + %lld);\n", ty, name, ty,
                        (long long)o->io_offset[b]);
        if (in) {                 /* rounded half away from zero and saturated, as every conversion */
            util_buf_printf(out, "    for (int64_t i = 0; i < %lld; i++)\n", (long long)n);
            util_buf_printf(out, "        %s[i] = dlcc_fx_d((double)((const %s *)inputs[%d])[i]);\n", name,
                            cg_c_dtype(p->bufs[b].dtype), p->bufs[b].index);
        }
    }
    util_buf_printf(out, "    %s_top(", N);
    for (int i = 0; i < np; i++) {
        cg_c_buf_name(p, ports[i], name, sizeof name);
        util_buf_printf(out, "%s%s", i ? ", " : "", name);
    }
    util_buf_printf(out, ");\n");
    for (int i = 0; i < np; i++) {
        int b = ports[i];
        if (p->bufs[b].storage != LOOP_ST_OUTPUT || !is_fixed_port(o, p, b))
            continue;
        cg_c_buf_name(p, b, name, sizeof name);
        util_buf_printf(out, "    for (int64_t i = 0; i < %lld; i++)\n", (long long)ir_shape_numel(&p->bufs[b].shape));
        util_buf_printf(out, "        ((%s *)outputs[%d])[i] = (%s)%s[i].to_double();\n",
                        cg_c_dtype(p->bufs[b].dtype), p->bufs[b].index, cg_c_dtype(p->bufs[b].dtype), name);
    }
    util_buf_printf(out, "    return %s_OK;\n}\n\n", N);
    util_buf_printf(out, "int32_t %s_run(const %s_inputs *in, %s_outputs *out, void *workspace)\n{\n", N, N, N);
    util_buf_printf(out, "    if (!in || !out) return %s_ERR_NULL;\n", N);
    util_buf_printf(out, "    const void *ins[%d] = {", p->n_inputs > 0 ? p->n_inputs : 1);
    for (int i = 0; i < p->n_inputs; i++)
        util_buf_printf(out, "%s in->%s", i ? "," : "", o->in_fields[i]);
    util_buf_printf(out, "%s };\n", p->n_inputs ? "" : " 0");
    util_buf_printf(out, "    void *outs[%d] = {", p->n_outputs > 0 ? p->n_outputs : 1);
    for (int i = 0; i < p->n_outputs; i++)
        util_buf_printf(out, "%s out->%s", i ? "," : "", o->out_fields[i]);
    util_buf_printf(out, "%s };\n", p->n_outputs ? "" : " 0");
    util_buf_printf(out, "    return %s_run_ptrs(ins, outs, workspace);\n}\n#endif /* __SYNTHESIS__ */\n", N);
}

int cg_hls_emit(const LoopProgram *p, const CgHlsOptions *o, UtilBuf *out, int *dataflow, UtilDiag *d)
{
    CgCTarget t = { .name = o->name, .fmt = o->fmt, .frac = o->frac, .loop_pragmas = hls_loop_pragmas,
                    .array_pragmas = hls_array_pragmas };
    int *ports = malloc((size_t)(p->n_bufs ? p->n_bufs : 1) * sizeof *ports);
    if (!ports)
        return util_error(d, util_loc_file(NULL), "out of memory");
    int np = port_list(p, ports);
    const char *why = NULL;
    *dataflow = cg_hls_dataflow_ok(p, &why);
    int streams = cg_hls_has_streams(p);
    if (o->fmt || streams)
        util_buf_printf(out, "/* %s.cpp, generated by dlcc from model '%s': Vitis HLS C++ (%s%s).\n"
                             " * Synthesizable part: %s_top and the functions it calls (fixed sizes, no heap,\n"
                             " * no recursion, no function pointers).  C-simulate with any C++ compiler and\n"
                             " * Xilinx's ap_types headers (%s) on the include path. */\n",
                        o->name, o->model, o->fmt ? "fixed point, ap_fixed" : "float32",
                        streams ? ", layers connected by hls::stream FIFOs" : "", o->name,
                        o->fmt && streams ? "ap_fixed.h, hls_stream.h" : o->fmt ? "ap_fixed.h" : "hls_stream.h");
    else
        util_buf_printf(out, "/* %s.c, generated by dlcc from model '%s': Vitis HLS C (float32).\n"
                             " * Synthesizable part: %s_top and the functions it calls (fixed sizes, no heap,\n"
                             " * no recursion, no function pointers).  Plain C99: any C compiler simulates it. */\n",
                        o->name, o->model, o->name);
    util_buf_printf(out, "#include <math.h>\n#include <stdint.h>\n%s%s%s#include \"%s.h\"\n\n",
                    streams ? "#include <stdio.h>\n" : "", o->fmt ? "#include <ap_fixed.h>\n#include <ap_int.h>\n" : "",
                    streams ? "#include <hls_stream.h>\n" : "", o->name);
    cg_c_helpers(out, &t, p);
    util_buf_printf(out, "\n");
    cg_c_emit_shared_consts(&t, p, out);
    int rc = 0;
    for (int k = 0; k < p->n_kernels && !rc; k++)
        rc = cg_c_emit_kernel(&t, p, k, 1, out, d);
    if (!rc) {
        util_buf_printf(out, "void %s_top(", o->name);
        char name[160];
        for (int i = 0; i < np; i++) {
            cg_c_buf_name(p, ports[i], name, sizeof name);
            util_buf_printf(out, "%s%s%s %s[%lld]", i ? ", " : "", port_const(p, ports[i]), cg_c_buf_type(&t, p, ports[i]).s,
                            name, (long long)ir_shape_numel(&p->bufs[ports[i]].shape));
        }
        util_buf_printf(out, "%s);\n\n", np ? "" : "void");
        top_function(&t, p, ports, np, *dataflow, why, out);
        host_wrapper(&t, o, p, ports, np, out);
    }
    free(ports);
    return rc;
}
