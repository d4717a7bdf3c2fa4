/* frontend/upgrade_impl.h — private to frontend/: the context and helpers of
 * the legacy-opset upgrade (upgrade.c) used by its rules (upgrade_rules.c). */
#ifndef DLCC_FRONTEND_UPGRADE_IMPL_H
#define DLCC_FRONTEND_UPGRADE_IMPL_H

#include "frontend/frontend.h"

typedef struct FeUp {
    IrGraph *g;
    UtilDiag *d;
    int *rank;          /* per tensor: rank known before inference, or -1 */
    int cap;
} FeUp;

/* A rule rewrites node `node` of an opset older than `below` in place (its
 * outputs keep their tensors); new nodes are appended.  0 or -1. */
typedef int (*UpRuleFn)(FeUp *u, int node);
typedef struct FeUpRule {
    IrOp op;
    int below;          /* applies when g->opset < below */
    UpRuleFn fn;
} FeUpRule;

extern const FeUpRule fe_up_rules[];
extern const int fe_up_n_rules;

/* Rank of tensor t known without shape inference (graph inputs, constants,
 * and what follows from them through rank-preserving operators), or -1. */
int fe_up_rank(FeUp *u, int t);
void fe_up_set_rank(FeUp *u, int t, int rank);
/* The value of t when it is a constant at load time (initializer or output
 * of a Constant node with a tensor value), else NULL. */
const IrArray *fe_up_const(const FeUp *u, int t);
/* New constant tensors (hint names them after node `at`'s first output). */
int fe_up_const_i64(FeUp *u, int at, const char *hint, int n, const int64_t *v, int rank);
/* A scalar constant of `like`'s dtype: direct when that dtype is known
 * before inference, else float32 followed by CastLike(·, like). */
int fe_up_scalar_like(FeUp *u, int at, const char *hint, double v, int like);
/* Appends a single-output node; out < 0 makes a fresh tensor.  Returns the
 * output tensor (and the node index in *node when non-NULL), or -1. */
int fe_up_add(FeUp *u, int at, IrOp op, int n_in, const int *in, int out, int *node);
/* Sets input slot `slot` of node (growing the list with absent inputs). */
int fe_up_set_input(FeUp *u, int node, int slot, int t);
/* Moves INTS attribute `key` of node to input `slot` as an int64 constant. */
int fe_up_ints_to_input(FeUp *u, int node, IrAttrKey key, int slot);
int fe_up_set_int(FeUp *u, int node, IrAttrKey key, int64_t v);
int fe_up_set_str(FeUp *u, int node, IrAttrKey key, const char *s);
int fe_up_oom(FeUp *u, int node);

#endif
