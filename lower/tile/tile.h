/* lower/tile/ — the register-blocked float32 compute templates of the CPU
 * schedule (LowSchedule tile_mr x tile_nr): Conv in one of five forms
 * (GEMM, pointwise, direct, depthwise, Winograd), ConvTranspose whose kernel
 * equals its stride, MatMul / Gemm with a
 * constant or run-time right operand, MaxPool and GlobalAveragePool; and
 * QLinearConv / QLinearMatMul on 8-bit dot products (LowSchedule.dot_i8).
 * Prefix: tile_.  The plain templates of lower/window.c and lower/matmul.c
 * try these first.  Each returns 1 when it does not apply (the plain
 * template follows), 0 when the kernel is built, -1 on error (diagnostic). */
#ifndef DLCC_TILE_H
#define DLCC_TILE_H

typedef struct Low Low;
typedef struct LowSchedule LowSchedule;
typedef struct LoopStmt LoopStmt;
typedef struct LoopExpr LoopExpr;

int tile_conv(Low *L);
int tile_convtranspose(Low *L);
int tile_matmul(Low *L);
int tile_gemm(Low *L);
int tile_maxpool(Low *L);
int tile_gap(Low *L);
/* QLinearConv and QLinearMatMul on 8-bit dot products, where the schedule
 * has them (qconv.c). */
int tile_qconv(Low *L);
int tile_qmatmul(Low *L);
/* MaxPool on an 8-bit tensor, vectors along the output rows (qpool.c). */
int tile_qmaxpool(Low *L);
/* float32 Conv, MatMul and Gemm by constant weights in bfloat16 words, for
 * --precision bf16 (LowSchedule.bf16; qconv.c). */
int tile_bconv(Low *L);
int tile_bmatmul(Low *L);
int tile_bgemm(Low *L);

/* The products of a recurrent kernel (lower/rnn.c), register-blocked.
 *
 * tile_product: a kernel of its own (gemm.c),
 *     Y[m*N + col] = bias[col] + sum_k A[m*K + k] * B[k*N + col]
 * for m < M, col < N: A and Y plain row-major buffers (Y is not the node's
 * output), B [K][N] and bias [N] (or NULL) constant.  1 when no block pays
 * for this schedule or shape (the caller's loops follow).
 *
 * The matrix-vector product of a recurrent step (matvec.c), B constant and
 * packed into panels of `width` columns read in order:
 *   tile_mv_width: the panel width for column ranges that are multiples of
 *     `unit` (0: none for this schedule);
 *   tile_mv_pack: B [D][K][N] (N a multiple of width) as a constant buffer
 *     of panels [D][N/width][K][width] (-1 out of memory);
 *   tile_mv: appended to blk, for col in [lo, lo + n) (multiples of width)
 *     y[y0 + col] = init[i0 + col] + sum_j x[x0 + j] * B[d][j][col]
 *     (d = the matrix bd of the D packed, j < K), summed in the order of j.
 *     y may be init (with y0 = i0). */
int tile_product(Low *L, int a, int y, int64_t M, int64_t K, int64_t N, const float *b, const float *bias);
int tile_mv_width(const LowSchedule *s, int64_t unit);
int tile_mv_pack(Low *L, const char *name, const float *b, int64_t D, int64_t K, int64_t N, int width);
int tile_mv(Low *L, LoopStmt *blk, int bp, int64_t bd, int64_t K, int64_t N, int width, int64_t lo, int64_t n,
            int x, LoopExpr *x0, int init, LoopExpr *i0, int y, LoopExpr *y0);

#endif
