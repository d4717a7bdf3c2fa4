/* tests/fuzz/fuzz_pipeline.c — libFuzzer harness: the whole pipeline on small
 * JSON models (fuzz_pipeline.h: inference, the interpreter, lowering). */
#include "tests/fuzz/fuzz_load.h"
#include "tests/fuzz/fuzz_pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    UtilDiag d;
    IrGraph *g = fuzz_load_json(data, size, &d);
    if (g)
        fuzz_run_pipeline(g);
    return 0;
}
