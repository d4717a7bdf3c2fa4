/* tests/fuzz/fuzz_onnx.c — libFuzzer harness: the ONNX reader (and the
 * legacy-form upgrade) on arbitrary bytes; a model that loads goes on
 * through the passes (fuzz_pipeline.h). */
#include "tests/fuzz/fuzz_pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    UtilDiag d;
    util_diag_init(&d);
    IrGraph *g = fe_load_onnx("/nonexistent-dlcc-fuzz/model.onnx", data, size, NULL, &d);
    if (!g != !!d.has_error)
        abort();
    if (g)
        fuzz_run_pipeline(g);
    return 0;
}
