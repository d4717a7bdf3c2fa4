/* tools/cmd_convert.c — dlcc convert: any model to the dlcc JSON format v1
 * plus a .safetensors file beside it, or to ONNX (OUT.onnx), written
 * atomically. */
#include "tools/tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The folder of out_path (malloc'd; NULL out of memory). */
static char *dir_of(const char *out_path)
{
    const char *slash = strrchr(out_path, '/');
    return slash ? (slash == out_path ? strdup("/") : strndup(out_path, (size_t)(slash - out_path))) : strdup(".");
}

/* OUT.onnx: the graph as an ONNX model (fe_write_onnx), written atomically. */
static int convert_onnx(const IrGraph *g, const char *out_path, UtilDiag *d)
{
    const char *slash = strrchr(out_path, '/');
    char *dir = dir_of(out_path);
    UtilBuf b;
    util_buf_init(&b);
    int created = 0, rc = dir ? fe_write_onnx(g, &b, d) : util_error(d, util_loc_file(out_path), "out of memory");
    if (!rc && !(rc = dlcc_prepare_dir(dir, &created, d))) {
        UtilOutSet outs;
        util_outset_init(&outs);
        rc = util_outset_write(&outs, dir, slash ? slash + 1 : out_path, b.data, b.len, d);
        rc = rc ? (util_outset_abort(&outs), rc) : util_outset_commit(&outs, d);
        if (rc && created)
            rmdir(dir);
    }
    util_buf_free(&b);
    free(dir);
    return rc;
}

int dlcc_convert_graph(const IrGraph *g, const char *out_path, UtilDiag *d)
{
    const char *slash = strrchr(out_path, '/');
    const char *base = slash ? slash + 1 : out_path;
    size_t bl = strlen(base);
    if (bl > 5 && strcmp(base + bl - 5, ".onnx") == 0)
        return convert_onnx(g, out_path, d);
    if (bl <= 5 || strcmp(base + bl - 5, ".json") != 0)
        return util_error(d, util_loc_file(out_path), "the output must be a .json file name such as model.json "
                          "(the .safetensors file is written beside it) or a .onnx file name");
    size_t stem = bl - 5;
    char *dir = dir_of(out_path);
    char *st_name = malloc(stem + sizeof ".safetensors");
    int rc = -1, created = 0;
    if (!dir || !st_name) {
        util_error(d, util_loc_file(out_path), "out of memory");
        goto done;
    }
    snprintf(st_name, stem + sizeof ".safetensors", "%.*s.safetensors", (int)stem, base);
    if (dlcc_prepare_dir(dir, &created, d))
        goto done;
    UtilOutSet outs;
    util_outset_init(&outs);
    rc = fe_write_json(g, &outs, dir, base, st_name, d);
    if (!rc)
        rc = util_outset_commit(&outs, d);
    else
        util_outset_abort(&outs);
    if (rc && created)
        rmdir(dir);
done:
    free(dir);
    free(st_name);
    return rc;
}

int dlcc_cmd_convert(int argc, char **argv)
{
    const char *out = NULL, *v;
    DlccArgs a;
    dlcc_args_init(&a, argc, argv, "convert");
    for (; a.i < argc && !a.status; a.i++) {
        if (dlcc_arg_common(&a))
            continue;
        else if ((v = dlcc_arg_value(&a, "-o")))
            out = v;
        else
            dlcc_arg_unknown(&a);
    }
    if (!dlcc_args_finish(&a) && (!out || !out[0]))
        a.status = dlcc_usage_error("'dlcc convert' needs -o OUT.json");
    IrGraph *g;
    int status = dlcc_args_load(&a, &g);           /* inference validates the model */
    if (status)
        return status;
    UtilDiag d;
    util_diag_init(&d);
    int rc = dlcc_convert_graph(g, out, &d);
    ir_graph_free(g);
    return rc ? dlcc_report(&d) : 0;
}
