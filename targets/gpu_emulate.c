/* targets/gpu_emulate.c — barrier splitting for --gpu-emulate. */
#include "targets/targets.h"

int tgt_gpu_split_barriers(LoopProgram *p, UtilDiag *d)
{
    (void)p;
    (void)d;
    return 0;
}
