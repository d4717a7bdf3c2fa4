/* tests/cmake/hetero/app.c: runs the partitioned model `net` once on a raw
 * float32 input file (argv[1]) and prints its first output, one value a line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"

int main(int argc, char **argv)
{
    static float in[net_INPUT_input_SIZE], out[net_OUTPUT_output_SIZE];
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
    if (!f || fread(in, sizeof in, 1, f) != 1)
        return 3;
    fclose(f);
    void *ws = NULL;
    if (posix_memalign(&ws, net_WORKSPACE_ALIGN, net_WORKSPACE_SIZE))
        return 4;
    memset(ws, 0, net_WORKSPACE_SIZE);
    net_inputs i = { in };
    net_outputs o = { out };
    int rc = net_run(&i, &o, ws), rel = net_release(ws);
    free(ws);
    if (rc != net_OK || rel != net_OK) {
        fprintf(stderr, "net_run %d, net_release %d\n", rc, rel);
        return 5;
    }
    for (int k = 0; k < net_OUTPUT_output_SIZE; k++)
        printf("%.9g\n", out[k]);
    return 0;
}
