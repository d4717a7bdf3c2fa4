/* tests/fuzz/fuzz_npy.c — libFuzzer harness: the .npy reader on arbitrary
 * bytes; an accepted array must be exactly as large as the data after the
 * header, and must write back. */
#include "frontend/frontend.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    IrArray a;
    UtilDiag d;
    util_diag_init(&d);
    memset(&a, 0, sizeof a);
    if (fe_npy_parse("fuzz.npy", data, size, &a, &d)) {
        if (!d.has_error)
            abort();
        return 0;
    }
    size_t bytes = ir_array_bytes(&a);
    if (bytes > size)
        abort();
    /* writing it back and comparing touches every byte (ASan checks the allocation) */
    UtilBuf out;
    util_buf_init(&out);
    if (fe_npy_write(&a, &out, &d) == 0) {
        IrArray b;
        memset(&b, 0, sizeof b);
        if (fe_npy_parse("again.npy", (const uint8_t *)out.data, out.len, &b, &d) ||
            b.dtype != a.dtype || !ir_shape_equal(&a.shape, &b.shape) ||
            (bytes && memcmp(a.data, b.data, bytes)))
            abort();
        free(b.data);
    }
    util_buf_free(&out);
    free(a.data);
    return 0;
}
