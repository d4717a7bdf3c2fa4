/* tests/fuzz/fuzz_onnx.c — libFuzzer harness: the ONNX reader on arbitrary
 * bytes. */
#include "frontend/frontend.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    UtilDiag d;
    util_diag_init(&d);
    IrGraph *g = fe_load_onnx("/nonexistent-dlcc-fuzz/model.onnx", data, size, NULL, &d);
    if (!g != !!d.has_error)
        abort();
    ir_graph_free(g);
    return 0;
}
