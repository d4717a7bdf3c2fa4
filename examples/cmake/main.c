/* classify — runs the MLP compiled by dlcc (see CMakeLists.txt).
 *
 *   classify [INPUT.bin]
 *
 * INPUT.bin holds mlp_INPUT_input_SIZE float32 values (native byte order);
 * without it the input is a ramp.  Prints every output value, then the
 * class (argmax) of each row. */
#include <dlcc/runtime.h>
#include <stdio.h>

#include "mlp.h"

DLCC_WORKSPACE(workspace, mlp_WORKSPACE_SIZE);

int main(int argc, char **argv)
{
    static float x[mlp_INPUT_input_SIZE], y[mlp_OUTPUT_output_SIZE];
    if (argc > 1) {
        FILE *f = fopen(argv[1], "rb");
        if (!f || fread(x, sizeof x[0], mlp_INPUT_input_SIZE, f) != mlp_INPUT_input_SIZE) {
            fprintf(stderr, "classify: cannot read %d floats from %s\n", mlp_INPUT_input_SIZE, argv[1]);
            return 2;
        }
        fclose(f);
    } else {
        for (int i = 0; i < mlp_INPUT_input_SIZE; i++)
            x[i] = (float)i / mlp_INPUT_input_SIZE - 0.5f;
    }
    mlp_inputs in = { .input = x };
    mlp_outputs out = { .output = y };
    int32_t rc = mlp_run(&in, &out, workspace);
    if (rc != mlp_OK) {
        fprintf(stderr, "classify: mlp_run returned %d\n", (int)rc);
        return 1;
    }
    for (int i = 0; i < mlp_OUTPUT_output_SIZE; i++)
        printf("%.9g\n", y[i]);
    static const int shape[] = mlp_OUTPUT_output_SHAPE;
    int classes = shape[mlp_OUTPUT_output_RANK - 1];
    for (int r = 0; r < mlp_OUTPUT_output_SIZE / classes; r++) {
        int best = 0;
        for (int k = 1; k < classes; k++)
            if (y[r * classes + k] > y[r * classes + best])
                best = k;
        printf("row %d: class %d\n", r, best);
    }
    return 0;
}
