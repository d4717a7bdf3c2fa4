/* frontend/load.c — reads a model file and picks the reader by content. */
#include "frontend/frontend.h"

#include <stdlib.h>
#include <string.h>

static int has_json_extension(const char *path)
{
    size_t n = strlen(path);
    return n >= 5 && strcmp(path + n - 5, ".json") == 0;
}

/* A JSON model starts (after white space and an optional UTF-8 BOM) with '{' (or is at least JSON-shaped: '[', or named *.json).
 * PyTorch checkpoints are zip archives ("PK\3\4") or pickles (0x80 proto). */
IrGraph *fe_load(const char *path, const FeOptions *opt, UtilDiag *d)
{
    char *data;
    size_t len;
    if (util_read_file(path, FE_MAX_MODEL_BYTES, &data, &len, d))
        return NULL;
    IrGraph *g = NULL;
    size_t i = 0;
    if (len >= 3 && (unsigned char)data[0] == 0xef && (unsigned char)data[1] == 0xbb &&
        (unsigned char)data[2] == 0xbf)
        i = 3;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
        i++;
    if (len == 0) {
        util_error(d, util_loc_file(path), "the model file is empty");
    } else if (len >= 4 && memcmp(data, "PK\3\4", 4) == 0) {
        util_error(d, util_loc_file(path), "this looks like a PyTorch checkpoint (.pt/.pth zip archive); "
                   "dlcc reads ONNX or dlcc JSON: export the model with torch.onnx.export");
    } else if ((unsigned char)data[0] == 0x80 && len >= 2 && data[1] >= 2 && data[1] <= 5) {
        util_error(d, util_loc_file(path), "this looks like a Python pickle (legacy PyTorch checkpoint); "
                   "dlcc reads ONNX or dlcc JSON: export the model with torch.onnx.export");
    } else if ((i < len && (data[i] == '{' || data[i] == '[')) || has_json_extension(path)) {
        g = fe_load_json(path, data, len, opt, d);
    } else {
        g = fe_load_onnx(path, (const uint8_t *)data, len, opt, d);
    }
    free(data);
    return g;
}
