/* tests/unit/lower_graph.h — small graph builder shared by the lowering
 * tests (test_lower.c, test_lower_jit.c): inputs, constants, one node at a
 * time, typed attributes, then pass_infer. */
#ifndef DLCC_TEST_LOWER_GRAPH_H
#define DLCC_TEST_LOWER_GRAPH_H

#include <string.h>

#include "ir/ir.h"
#include "lower/lower.h"
#include "passes/passes.h"
#include "targets/targets.h"

typedef struct TG {
    IrGraph *g;
    UtilDiag d;
    int node;              /* last node added */
} TG;

static inline void tg_start(TG *t, const char *name)
{
    memset(t, 0, sizeof *t);
    t->g = ir_graph_new(name, "t.json");
    util_diag_init(&t->d);
}

static inline IrShape tg_shape(int rank, const int64_t *dims)
{
    IrShape s = { .rank = rank };
    if (rank)
        memcpy(s.dims, dims, (size_t)rank * sizeof(int64_t));
    return s;
}

static inline int tg_tensor(TG *t, const char *name, IrTensorKind kind)
{
    return ir_add_tensor(t->g, name, kind, util_loc_file("t.json"), &t->d);
}

static inline int tg_input(TG *t, const char *name, IrDType dt, int rank, const int64_t *dims)
{
    int x = tg_tensor(t, name, IR_TK_INPUT);
    IrShape s = tg_shape(rank, dims);
    ir_set_type(t->g, x, dt, &s);
    ir_add_input(t->g, x);
    return x;
}

/* A constant with the given values (converted to dt). */
static inline int tg_const(TG *t, const char *name, IrDType dt, int rank, const int64_t *dims, const double *vals)
{
    int x = tg_tensor(t, name, IR_TK_CONST);
    IrShape s = tg_shape(rank, dims);
    ir_set_type(t->g, x, dt, &s);
    void *data = ir_alloc_data(t->g, x);
    for (int64_t i = 0; i < ir_shape_numel(&s); i++)
        ir_store_f64(dt, data, i, vals[i]);
    return x;
}

/* Adds node `name` of op over inputs in (-1 = absent) with n_out outputs
 * named NAME_out0, ...; returns the first output tensor. */
static inline int tg_node(TG *t, IrOp op, const char *name, int n_in, const int *in, int n_out)
{
    int out[8];
    for (int k = 0; k < n_out; k++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s_out%d", name, k);
        out[k] = tg_tensor(t, nm, IR_TK_VALUE);
    }
    t->node = ir_add_node(t->g, op, name, n_in, in, n_out, out, util_loc_file("t.json"));
    return out[0];
}

static inline void tg_int(TG *t, IrAttrKey key, int64_t v)
{
    IrAttr a = { .key = key, .kind = IR_AK_INT, .v.i = v };
    ir_set_attr(t->g, t->node, &a);
}

static inline void tg_float(TG *t, IrAttrKey key, double v)
{
    IrAttr a = { .key = key, .kind = IR_AK_FLOAT, .v.f = v };
    ir_set_attr(t->g, t->node, &a);
}

static inline void tg_ints(TG *t, IrAttrKey key, int n, const int64_t *v)
{
    IrAttr a = { .key = key, .kind = IR_AK_INTS, .n = n, .v.ints = (int64_t *)v };
    ir_set_attr(t->g, t->node, &a);
}

static inline void tg_str(TG *t, IrAttrKey key, const char *s)
{
    IrAttr a = { .key = key, .kind = IR_AK_STRING, .v.s = s };
    ir_set_attr(t->g, t->node, &a);
}

static inline void tg_tensor_attr(TG *t, IrAttrKey key, IrArray *v)
{
    IrAttr a = { .key = key, .kind = IR_AK_TENSOR, .v.tensor = v };
    ir_set_attr(t->g, t->node, &a);
}

static inline void tg_output(TG *t, int x) { ir_add_output(t->g, x); }

#define TG_INTS(...) (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (int64_t[]){ __VA_ARGS__ }

#endif
