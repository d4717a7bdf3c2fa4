/* The firmware's application: runs the model once on a ramp input and
 * prints the outputs and their argmax over semihosting.  The model's
 * workspace is the static buffer inside net.o (workspace == NULL). */
#include <stdio.h>

#include "net.h"

static float x[net_INPUT_input_SIZE], y[net_OUTPUT_output_SIZE];

int main(void)
{
    for (int i = 0; i < net_INPUT_input_SIZE; i++)
        x[i] = (float)(i % 97) / 97.0f - 0.5f;
    const void *in[] = { x };
    void *out[] = { y };
    int32_t rc = net_run_ptrs(in, out, NULL);
    if (rc != net_OK) {
        printf("net_run_ptrs returned %d\n", (int)rc);
        return 1;
    }
    int best = 0;
    for (int i = 0; i < net_OUTPUT_output_SIZE; i++) {
        printf("y[%d] = %.6f\n", i, (double)y[i]);
        if (y[i] > y[best])
            best = i;
    }
    printf("class %d (workspace %d bytes static, weights %d bytes, stack <= %d bytes)\n", best,
           net_WORKSPACE_SIZE, net_WEIGHTS_SIZE, net_STACK_SIZE);
    return 0;
}
