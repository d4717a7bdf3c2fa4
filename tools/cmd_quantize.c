/* tools/cmd_quantize.c — dlcc quantize: post-training quantization of a
 * float model into a QDQ ONNX model (the model ONNX Runtime's
 * quantize_static writes by default; passes/quantize.c), written
 * atomically. */
#include "tools/tools.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dlcc_cmd_quantize(int argc, char **argv)
{
    const char *out = NULL, *calibrate = NULL, *v;
    double pct = 0;
    DlccArgs a;
    dlcc_args_init(&a, argc, argv, "quantize");
    for (; a.i < argc && !a.status; a.i++) {
        if (dlcc_arg_common(&a))
            continue;
        else if ((v = dlcc_arg_value(&a, "-o")))
            out = v;
        else if ((v = dlcc_arg_value(&a, "--calibrate")))
            calibrate = v;
        else if ((v = dlcc_arg_value(&a, "--calibration")))
            a.status = dlcc_parse_calibration(v, &pct);
        else
            dlcc_arg_unknown(&a);
    }
    if (!dlcc_args_finish(&a) && (!out || !out[0] || !calibrate))
        a.status = dlcc_usage_error("'dlcc quantize' needs --calibrate DIR and -o OUT.onnx");
    size_t ol = out ? strlen(out) : 0;
    if (!a.status && (ol <= 5 || strcmp(out + ol - 5, ".onnx") != 0))
        a.status = dlcc_usage_error("'dlcc quantize' writes an ONNX model: -o wants a .onnx file name, not '%s'", out);
    IrGraph *g;
    int status = dlcc_args_load(&a, &g);
    if (status)
        return status;
    UtilDiag d;
    util_diag_init(&d);
    PassQuantReport rep = { 0 };
    int rc = dlcc_quantize_with(g, calibrate, pct, &rep, &d);
    if (!rc)
        rc = dlcc_convert_graph(g, out, &d);
    if (!rc)   /* the accuracy drop on the calibration samples, the float model as the reference */
        printf("%s: int8 on the %d calibration samples: top-1 as float on %d (%.1f%%), max |int8 - float| %.4f of "
               "max |float|\n", out, rep.n_samples, rep.top1_same, 100.0 * rep.top1_same / rep.n_samples,
               rep.max_rel_err);
    ir_graph_free(g);
    return rc ? dlcc_report(&d) : 0;
}
