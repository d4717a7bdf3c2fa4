/* tests/fuzz/fuzz_safetensors.c — libFuzzer harness: the safetensors reader
 * on arbitrary bytes; every accepted entry must lie inside the data. */
#include "frontend/frontend.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FeSafetensors st;
    UtilDiag d;
    util_diag_init(&d);
    if (fe_st_parse(&st, "fuzz.safetensors", data, size, &d)) {
        if (!d.has_error)
            abort();
        return 0;
    }
    uint64_t data_len = st.len - st.data_start;
    for (int i = 0; i < st.n; i++) {
        const FeStEntry *e = &st.entries[i];
        if (e->begin > e->end || e->end > data_len || fe_st_find(&st, e->name) != e)
            abort();
    }
    fe_st_close(&st);
    return 0;
}
