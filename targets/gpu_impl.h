/* targets/gpu_impl.h — helpers shared by the GPU schedule files. */
#ifndef DLCC_TGT_GPU_IMPL_H
#define DLCC_TGT_GPU_IMPL_H

#include "targets/targets.h"

/* Does e mention variable var? */
int tgt_gpu_expr_uses(const LoopExpr *e, int var);
/* A copy of e with each VAR vars[i] replaced by a copy of by[i]. */
LoopExpr *tgt_gpu_subst(LoopProgram *p, const LoopExpr *e, const int *vars, LoopExpr *const *by, int n);

#endif
