/* examples/cnn/main.c — uses a model compiled by dlcc through its generated
 * header only:
 *
 *     dlcc examples/cnn/model.json --name cnn -o out
 *     cc -I out examples/cnn/main.c out/cnn.o -lm -o cnn_demo
 *     ./cnn_demo examples/cnn/input.npy examples/cnn/expected_output.npy
 *
 * It reads the input image from a .npy file, runs cnn_run with a workspace of
 * cnn_WORKSPACE_SIZE bytes, prints the ten scores and, given PyTorch's output,
 * the largest difference from it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnn.h"

/* Reads the float32 payload of a .npy file (format version 1 or 2). */
static int read_npy(const char *path, float *dst, size_t count)
{
    unsigned char h[12];
    FILE *f = fopen(path, "rb");
    if (!f || fread(h, 1, 10, f) != 10 || memcmp(h, "\x93NUMPY", 6) != 0) {
        fprintf(stderr, "%s: not a .npy file\n", path);
        return -1;
    }
    size_t header = h[8] | (size_t)h[9] << 8, skip = 10;
    if (h[6] >= 2) {
        if (fread(h + 10, 1, 2, f) != 2)
            return -1;
        header |= (size_t)h[10] << 16 | (size_t)h[11] << 24;
        skip = 12;
    }
    int ok = fseek(f, (long)(skip + header), SEEK_SET) == 0 && fread(dst, sizeof *dst, count, f) == count;
    fclose(f);
    if (!ok)
        fprintf(stderr, "%s: too short\n", path);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    static float image[cnn_INPUT_input_SIZE], scores[cnn_OUTPUT_output_SIZE], expected[cnn_OUTPUT_output_SIZE];
    static _Alignas(cnn_WORKSPACE_ALIGN) unsigned char workspace[cnn_WORKSPACE_SIZE + 1];
    if (argc < 2 || read_npy(argv[1], image, cnn_INPUT_input_SIZE))
        return 2;
    cnn_inputs in = { .input = image };
    cnn_outputs out = { .output = scores };
    int32_t rc = cnn_run(&in, &out, workspace);
    if (rc != cnn_OK) {
        fprintf(stderr, "cnn_run failed: %d\n", (int)rc);
        return 1;
    }
    int best = 0;
    for (int i = 0; i < cnn_OUTPUT_output_SIZE; i++) {
        printf("score[%d] = %9.6f\n", i, scores[i]);
        if (scores[i] > scores[best])
            best = i;
    }
    printf("class %d (workspace %d bytes, weights %d bytes)\n", best, cnn_WORKSPACE_SIZE, cnn_WEIGHTS_SIZE);
    if (argc > 2 && read_npy(argv[2], expected, cnn_OUTPUT_output_SIZE) == 0) {
        double worst = 0;
        for (int i = 0; i < cnn_OUTPUT_output_SIZE; i++)
            worst = fmax(worst, fabs((double)scores[i] - expected[i]));
        printf("largest difference from PyTorch: %.3g\n", worst);
        return worst <= 1e-4 ? 0 : 1;
    }
    return 0;
}
