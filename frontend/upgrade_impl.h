/* frontend/upgrade_impl.h — private to frontend/: the context and helpers of
 * the legacy-opset upgrade (upgrade.c) used by its rules (upgrade_rules.c). */
#ifndef DLCC_FRONTEND_UPGRADE_IMPL_H
#define DLCC_FRONTEND_UPGRADE_IMPL_H

#include "frontend/frontend.h"

typedef struct Up {
    IrGraph *g;
    UtilDiag *d;
    int *rank;          /* per tensor: rank known before inference, or -1 */
    int cap;
} Up;

/* A rule rewrites node `node` of an opset older than `below` in place (its
 * outputs keep their tensors); new nodes are appended.  0 or -1. */
typedef int (*UpRuleFn)(Up *u, int node);
typedef struct UpRule {
    IrOp op;
    int below;          /* applies when g->opset < below */
    UpRuleFn fn;
} UpRule;

extern const UpRule fe_up_rules[];
extern const int fe_up_n_rules;

/* Rank of tensor t known without shape inference (graph inputs, constants,
 * and what follows from them through rank-preserving operators), or -1. */
int up_rank(Up *u, int t);
void up_set_rank(Up *u, int t, int rank);
/* The value of t when it is a constant at load time (initializer or output
 * of a Constant node with a tensor value), else NULL. */
const IrArray *up_const(const Up *u, int t);
/* New constant tensors (hint names them after node `at`'s first output). */
int up_const_i64(Up *u, int at, const char *hint, int n, const int64_t *v, int rank);
/* A scalar constant of `like`'s dtype: direct when that dtype is known
 * before inference, else float32 followed by CastLike(·, like). */
int up_scalar_like(Up *u, int at, const char *hint, double v, int like);
/* Appends a single-output node; out < 0 makes a fresh tensor.  Returns the
 * output tensor (and the node index in *node when non-NULL), or -1. */
int up_add(Up *u, int at, IrOp op, int n_in, const int *in, int out, int *node);
/* Sets input slot `slot` of node (growing the list with absent inputs). */
int up_set_input(Up *u, int node, int slot, int t);
/* Moves INTS attribute `key` of node to input `slot` as an int64 constant. */
int up_ints_to_input(Up *u, int node, IrAttrKey key, int slot);
int up_set_int(Up *u, int node, IrAttrKey key, int64_t v);
int up_set_str(Up *u, int node, IrAttrKey key, const char *s);
int up_oom(Up *u, int node);

#endif
