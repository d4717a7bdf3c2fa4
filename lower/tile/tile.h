/* lower/tile/ — the register-blocked float32 compute templates of the CPU
 * schedule (LowSchedule tile_mr x tile_nr): Conv in one of five forms
 * (GEMM, pointwise, direct, depthwise, Winograd), ConvTranspose whose kernel
 * equals its stride, MatMul / Gemm with a
 * constant or run-time right operand, MaxPool and GlobalAveragePool.
 * Prefix: tile_.  The plain templates of lower/window.c and lower/matmul.c
 * try these first.  Each returns 1 when it does not apply (the plain
 * template follows), 0 when the kernel is built, -1 on error (diagnostic). */
#ifndef DLCC_TILE_H
#define DLCC_TILE_H

typedef struct Low Low;

int tile_conv(Low *L);
int tile_convtranspose(Low *L);
int tile_matmul(Low *L);
int tile_gemm(Low *L);
int tile_maxpool(Low *L);
int tile_gap(Low *L);

#endif
