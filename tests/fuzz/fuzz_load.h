/* tests/fuzz/fuzz_load.h — shared by the JSON harnesses: the bytes as
 * fe_load hands a file to the JSON reader (NUL-terminated), with weights
 * paths resolving beside a folder that does not exist. */
#ifndef DLCC_TESTS_FUZZ_LOAD_H
#define DLCC_TESTS_FUZZ_LOAD_H

#include "frontend/frontend.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A graph, or NULL with a diagnostic in d (also when out of memory). */
static inline IrGraph *fuzz_load_json(const uint8_t *data, size_t size, UtilDiag *d)
{
    char *text = malloc(size + 1);
    util_diag_init(d);
    if (!text) {
        util_error(d, util_loc_file(NULL), "out of memory");
        return NULL;
    }
    memcpy(text, data, size);
    text[size] = 0;
    IrGraph *g = fe_load_json("/nonexistent-dlcc-fuzz/model.json", text, size, NULL, d);
    free(text);
    if (!g != !!d->has_error)
        abort();        /* a result and a diagnostic, or neither */
    return g;
}

#endif
