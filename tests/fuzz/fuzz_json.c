/* tests/fuzz/fuzz_json.c — libFuzzer harness: the JSON model reader on
 * arbitrary bytes. */
#include "tests/fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    UtilDiag d;
    ir_graph_free(fuzz_load_json(data, size, &d));
    return 0;
}
