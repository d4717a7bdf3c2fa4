/* tests/fuzz/fuzz_json.c — libFuzzer harness: the JSON model reader on
 * arbitrary bytes (as fe_load hands it a file: NUL-terminated). */
#include "frontend/frontend.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    UtilDiag d;
    util_diag_init(&d);
    /* weights paths resolve beside this (non-existent) folder */
    IrGraph *g = fe_load_json("/nonexistent-dlcc-fuzz/model.json", text, size, NULL, &d);
    if (!g != !!d.has_error)
        abort();        /* a result and a diagnostic, or neither */
    ir_graph_free(g);
    free(text);
    return 0;
}
