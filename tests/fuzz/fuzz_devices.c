/* tests/fuzz/fuzz_devices.c — libFuzzer harness: the device file reader of
 * `dlcc partition` (targets/hetero/devices.c) on arbitrary bytes; an
 * accepted file must write back (tgt_hetero_write_devices) to a file that
 * reads as the same devices and links. */
#include "targets/hetero/hetero_impl.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);                          /* NUL-terminated, as a file read is */
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    TgtDeviceFile f, g;
    UtilDiag d;
    util_diag_init(&d);
    if (tgt_hetero_read_devices("fuzz.json", text, size, &f, &d)) {
        if (!d.has_error)
            abort();
        tgt_hetero_devices_free(&f);
        free(text);
        return 0;
    }
    UtilBuf out;
    util_buf_init(&out);
    tgt_hetero_write_devices(f.devices, f.n_devices, f.links, f.n_links, &out);
    if (!out.oom) {
        if (tgt_hetero_read_devices("again.json", out.data, out.len, &g, &d) || g.n_devices != f.n_devices ||
            g.n_links != f.n_links)
            abort();
        for (int i = 0; i < f.n_devices; i++)
            if (strcmp(g.devices[i].name, f.devices[i].name) || g.devices[i].kind != f.devices[i].kind)
                abort();
        for (int i = 0; i < f.n_links; i++)
            if (g.links[i].from != f.links[i].from || g.links[i].to != f.links[i].to)
                abort();
        tgt_hetero_devices_free(&g);
    }
    util_buf_free(&out);
    tgt_hetero_devices_free(&f);
    free(text);
    return 0;
}
