/* ir/graph.c — graph construction, name lookup, topological order, uses. */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

IrGraph *ir_graph_new(const char *name, const char *file)
{
    IrGraph *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    util_arena_init(&g->arena);
    g->name = util_arena_strdup(&g->arena, name ? name : "model");
    g->file = util_arena_strdup(&g->arena, file ? file : "");
    g->opset = 21;
    g->need_value = -1;
    return g;
}

void ir_graph_free(IrGraph *g)
{
    if (!g)
        return;
    free(g->tensors);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->hash);
    free(g->use_start);
    free(g->use_node);
    free(g->use_slot);
    util_arena_free(&g->arena);
    free(g);
}

char *ir_strdup(IrGraph *g, const char *s) { return util_arena_strdup(&g->arena, s ? s : ""); }
void *ir_alloc(IrGraph *g, size_t bytes) { return util_arena_alloc(&g->arena, bytes); }

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > (1 << 28))
            return -1;
        nc *= 2;
    }
    void *q = realloc(*p, (size_t)nc * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* ---- name hash ---- */

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;           /* FNV-1a */
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static int hash_rebuild(IrGraph *g, int cap)
{
    int *h = malloc((size_t)cap * sizeof *h);
    if (!h)
        return -1;
    for (int i = 0; i < cap; i++)
        h[i] = -1;
    for (int t = 0; t < g->n_tensors; t++) {
        uint64_t k = str_hash(g->tensors[t].name) & (uint64_t)(cap - 1);
        while (h[k] >= 0)
            k = (k + 1) & (uint64_t)(cap - 1);
        h[k] = t;
    }
    free(g->hash);
    g->hash = h;
    g->hash_cap = cap;
    return 0;
}

int ir_find_tensor(const IrGraph *g, const char *name)
{
    if (!g->hash_cap)
        return -1;
    uint64_t k = str_hash(name) & (uint64_t)(g->hash_cap - 1);
    while (g->hash[k] >= 0) {
        if (strcmp(g->tensors[g->hash[k]].name, name) == 0)
            return g->hash[k];
        k = (k + 1) & (uint64_t)(g->hash_cap - 1);
    }
    return -1;
}

int ir_add_tensor(IrGraph *g, const char *name, IrTensorKind kind, UtilLoc loc, UtilDiag *d)
{
    if (ir_find_tensor(g, name) >= 0)
        return util_error(d, loc, "duplicate tensor name '%s'", name);
    if (grow((void **)&g->tensors, &g->cap_tensors, g->n_tensors + 1, sizeof(IrTensor)))
        return util_error(d, loc, "out of memory");
    if ((g->n_tensors + 1) * 2 > g->hash_cap && hash_rebuild(g, g->hash_cap ? g->hash_cap * 2 : 64))
        return util_error(d, loc, "out of memory");
    IrTensor *t = &g->tensors[g->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = ir_strdup(g, name);
    if (!t->name)
        return util_error(d, loc, "out of memory");
    t->kind = kind;
    t->producer = -1;
    t->loc = loc;
    int idx = g->n_tensors++;
    uint64_t k = str_hash(name) & (uint64_t)(g->hash_cap - 1);
    while (g->hash[k] >= 0)
        k = (k + 1) & (uint64_t)(g->hash_cap - 1);
    g->hash[k] = idx;
    g->uses_valid = 0;
    return idx;
}

int ir_add_temp(IrGraph *g, const char *hint)
{
    char buf[256];
    UtilDiag d;
    util_diag_init(&d);
    for (int i = 0;; i++) {
        snprintf(buf, sizeof buf, "%.200s__%d", hint, i);
        if (ir_find_tensor(g, buf) < 0)
            return ir_add_tensor(g, buf, IR_TK_VALUE, util_loc_file(g->file), &d);
    }
}

int ir_add_input(IrGraph *g, int t)
{
    if (grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof(int)))
        return -1;
    g->inputs[g->n_inputs++] = t;
    return 0;
}

int ir_add_output(IrGraph *g, int t)
{
    if (grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof(int)))
        return -1;
    g->outputs[g->n_outputs++] = t;
    g->uses_valid = 0;
    return 0;
}

void ir_set_type(IrGraph *g, int t, IrDType dt, const IrShape *shape)
{
    IrTensor *x = &g->tensors[t];
    x->v.dtype = dt;
    x->v.shape = *shape;
    x->shape_known = 1;
}

void *ir_alloc_data(IrGraph *g, int t)
{
    IrTensor *x = &g->tensors[t];
    int64_t n = ir_shape_numel(&x->v.shape);
    size_t es = ir_dtype_size(x->v.dtype);
    if (n < 0 || es == 0)
        return NULL;
    x->v.data = util_arena_array(&g->arena, (size_t)n ? (size_t)n : 1, es);
    return x->v.data;
}

int ir_add_node(IrGraph *g, IrOp op, const char *name, int n_in, const int *in, int n_out,
                const int *out, UtilLoc loc)
{
    if (grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(IrNode)))
        return -1;
    IrNode *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->name = ir_strdup(g, name ? name : "");
    n->in = util_arena_array(&g->arena, (size_t)(n_in ? n_in : 1), sizeof(int));
    n->out = util_arena_array(&g->arena, (size_t)(n_out ? n_out : 1), sizeof(int));
    if (!n->name || !n->in || !n->out)
        return -1;
    if (n_in)
        memcpy(n->in, in, (size_t)n_in * sizeof(int));
    if (n_out)
        memcpy(n->out, out, (size_t)n_out * sizeof(int));
    n->n_in = n_in;
    n->n_out = n_out;
    n->loc = loc;
    int idx = g->n_nodes++;
    for (int i = 0; i < n_out; i++)
        if (out[i] >= 0)
            g->tensors[out[i]].producer = idx;
    g->uses_valid = 0;
    return idx;
}

int ir_set_inputs(IrGraph *g, int node, int n_in, const int *in)
{
    int *p = util_arena_array(&g->arena, (size_t)(n_in ? n_in : 1), sizeof(int));
    if (!p)
        return -1;
    if (n_in)
        memcpy(p, in, (size_t)n_in * sizeof(int));
    g->nodes[node].in = p;
    g->nodes[node].n_in = n_in;
    g->uses_valid = 0;
    return 0;
}

static int attr_copy(IrGraph *g, IrAttr *dst, const IrAttr *a)
{
    *dst = *a;
    switch (a->kind) {
    case IR_AK_STRING:
        dst->v.s = ir_strdup(g, a->v.s);
        return dst->v.s ? 0 : -1;
    case IR_AK_INTS:
        dst->v.ints = util_arena_array(&g->arena, (size_t)(a->n ? a->n : 1), sizeof(int64_t));
        if (!dst->v.ints)
            return -1;
        if (a->n)
            memcpy(dst->v.ints, a->v.ints, (size_t)a->n * sizeof(int64_t));
        return 0;
    case IR_AK_FLOATS:
        dst->v.floats = util_arena_array(&g->arena, (size_t)(a->n ? a->n : 1), sizeof(double));
        if (!dst->v.floats)
            return -1;
        if (a->n)
            memcpy(dst->v.floats, a->v.floats, (size_t)a->n * sizeof(double));
        return 0;
    case IR_AK_STRINGS:
        dst->v.strings = util_arena_array(&g->arena, (size_t)(a->n ? a->n : 1), sizeof(char *));
        if (!dst->v.strings)
            return -1;
        for (int i = 0; i < a->n; i++)
            if (!(dst->v.strings[i] = ir_strdup(g, a->v.strings[i])))
                return -1;
        return 0;
    case IR_AK_TENSOR: {
        IrArray *t = ir_alloc(g, sizeof *t);
        if (!t)
            return -1;
        *t = *a->v.tensor;
        size_t bytes = ir_array_bytes(a->v.tensor);
        t->data = ir_alloc(g, bytes ? bytes : 1);
        if (!t->data)
            return -1;
        if (bytes)
            memcpy(t->data, a->v.tensor->data, bytes);
        dst->v.tensor = t;
        return 0;
    }
    default:
        return 0;
    }
}

int ir_set_attr(IrGraph *g, int node, const IrAttr *a)
{
    IrNode *n = &g->nodes[node];
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].key == a->key)
            return attr_copy(g, &n->attrs[i], a);
    IrAttr *na = util_arena_array(&g->arena, (size_t)n->n_attrs + 1, sizeof(IrAttr));
    if (!na)
        return -1;
    if (n->n_attrs)
        memcpy(na, n->attrs, (size_t)n->n_attrs * sizeof(IrAttr));
    if (attr_copy(g, &na[n->n_attrs], a))
        return -1;
    n->attrs = na;
    n->n_attrs++;
    return 0;
}

void ir_remove_attr(IrGraph *g, int node, IrAttrKey key)
{
    IrNode *n = &g->nodes[node];
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].key == key) {
            memmove(&n->attrs[i], &n->attrs[i + 1], (size_t)(n->n_attrs - i - 1) * sizeof(IrAttr));
            n->n_attrs--;
            return;
        }
}

IrTensor *ir_in(const IrGraph *g, const IrNode *n, int i)
{
    return i < n->n_in && n->in[i] >= 0 ? &g->tensors[n->in[i]] : NULL;
}

IrTensor *ir_out(const IrGraph *g, const IrNode *n, int i)
{
    return i < n->n_out && n->out[i] >= 0 ? &g->tensors[n->out[i]] : NULL;
}

int ir_node_error(const IrGraph *g, const IrNode *n, UtilDiag *d, const char *fmt, ...)
{
    char msg[UTIL_DIAG_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    UtilLoc loc = n->loc;
    if (!loc.file)
        loc.file = g->file;
    if (n->name[0])
        return util_error(d, loc, "node '%s' (%s): %s", n->name, ir_op_name(n->op), msg);
    return util_error(d, loc, "node #%d (%s): %s", (int)(n - g->nodes), ir_op_name(n->op), msg);
}

/* ---- topological order (Kahn, stable by original position) ---- */

int ir_toposort(IrGraph *g, UtilDiag *d)
{
    int nn = g->n_nodes, nt = g->n_tensors;
    int *pending = calloc((size_t)nn + 1, sizeof(int));
    int *order = malloc(((size_t)nn + 1) * sizeof(int));
    int *heap = malloc(((size_t)nn + 1) * sizeof(int));   /* min-heap of ready node indices */
    (void)nt;
    if (!pending || !order || !heap || ir_build_uses(g)) {
        free(pending); free(order); free(heap);
        return util_error(d, util_loc_file(g->file), "out of memory");
    }
    for (int i = 0; i < nn; i++) {
        const IrNode *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && g->tensors[n->in[k]].producer >= 0)
                pending[i]++;
    }
    int hn = 0, no = 0;
#define HEAP_PUSH(x) do { int _i = hn++; heap[_i] = (x); \
        while (_i && heap[(_i - 1) / 2] > heap[_i]) { int _p = (_i - 1) / 2, _t = heap[_p]; \
            heap[_p] = heap[_i]; heap[_i] = _t; _i = _p; } } while (0)
    for (int i = 0; i < nn; i++)
        if (!pending[i])
            HEAP_PUSH(i);
    while (hn) {
        int top = heap[0];
        heap[0] = heap[--hn];
        for (int i = 0;;) {                          /* sift down */
            int l = 2 * i + 1, r = l + 1, m = i;
            if (l < hn && heap[l] < heap[m]) m = l;
            if (r < hn && heap[r] < heap[m]) m = r;
            if (m == i) break;
            int t = heap[m]; heap[m] = heap[i]; heap[i] = t; i = m;
        }
        order[no++] = top;
        const IrNode *n = &g->nodes[top];
        for (int k = 0; k < n->n_out; k++) {
            int t = n->out[k];
            if (t < 0)
                continue;
            for (int u = g->use_start[t]; u < g->use_start[t + 1]; u++)
                if (--pending[g->use_node[u]] == 0)
                    HEAP_PUSH(g->use_node[u]);
        }
    }
#undef HEAP_PUSH
    int rc = 0;
    if (no != nn) {
        /* Walk back from a node still waiting, through a producer that is
         * also waiting, until a node repeats: that node lies on a cycle. */
        int bad = 0;
        while (bad < nn && !pending[bad])
            bad++;
        char *seen = calloc((size_t)nn + 1, 1);
        for (int steps = 0; seen && bad < nn && !seen[bad] && steps <= nn; steps++) {
            seen[bad] = 1;
            const IrNode *n = &g->nodes[bad];
            int next = -1;
            for (int k = 0; k < n->n_in && next < 0; k++) {
                int t = n->in[k], pnode = t >= 0 ? g->tensors[t].producer : -1;
                if (pnode >= 0 && pending[pnode])
                    next = pnode;
            }
            if (next < 0)
                break;
            bad = next;
        }
        free(seen);
        rc = ir_node_error(g, &g->nodes[bad < nn ? bad : 0], d,
                           "the graph has a cycle through this node");
    } else {
        IrNode *sorted = malloc(((size_t)nn + 1) * sizeof(IrNode));
        if (!sorted) {
            rc = util_error(d, util_loc_file(g->file), "out of memory");
        } else {
            for (int i = 0; i < nn; i++)
                sorted[i] = g->nodes[order[i]];
            if (nn)
                memcpy(g->nodes, sorted, (size_t)nn * sizeof(IrNode));
            free(sorted);
            for (int i = 0; i < nn; i++)
                for (int k = 0; k < g->nodes[i].n_out; k++)
                    if (g->nodes[i].out[k] >= 0)
                        g->tensors[g->nodes[i].out[k]].producer = i;
            g->uses_valid = 0;
        }
    }
    free(pending); free(order); free(heap);
    return rc;
}

int ir_bind_input(IrGraph *g, int t, const IrArray *v, UtilDiag *d)
{
    int k = 0;
    while (k < g->n_inputs && g->inputs[k] != t)
        k++;
    IrTensor *x = &g->tensors[t];
    if (k == g->n_inputs)
        return util_error(d, x->loc, "'%s' is not a runtime input of the model", x->name);
    if (v->dtype != x->v.dtype || (x->shape_known && !ir_shape_equal(&v->shape, &x->v.shape))) {
        char want[256], got[256];
        ir_shape_str(&x->v.shape, want, sizeof want);
        ir_shape_str(&v->shape, got, sizeof got);
        return util_error(d, x->loc, "input '%s' is %s %s; the value bound to it is %s %s", x->name,
                          ir_dtype_name(x->v.dtype), want, ir_dtype_name(v->dtype), got);
    }
    size_t bytes = ir_array_bytes(v);
    void *p = ir_alloc(g, bytes ? bytes : 1);
    if (!p)
        return util_error(d, x->loc, "out of memory");
    if (bytes)
        memcpy(p, v->data, bytes);
    x->kind = IR_TK_CONST;
    x->v.shape = v->shape;
    x->shape_known = 1;
    x->v.data = p;
    memmove(g->inputs + k, g->inputs + k + 1, (size_t)(g->n_inputs - k - 1) * sizeof *g->inputs);
    g->n_inputs--;
    return 0;
}

void ir_mark_ancestors(const IrGraph *g, int t, char *mark)
{
    mark[t] = 1;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        const IrNode *n = &g->nodes[i];
        int hit = 0;
        for (int k = 0; k < n->n_out && !hit; k++)
            hit = n->out[k] >= 0 && mark[n->out[k]];
        for (int k = 0; hit && k < n->n_in; k++)
            if (n->in[k] >= 0)
                mark[n->in[k]] = 1;
    }
}

int ir_build_uses(IrGraph *g)
{
    if (g->uses_valid)
        return 0;
    int nt = g->n_tensors;
    free(g->use_start); free(g->use_node); free(g->use_slot);
    size_t total = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            total += (size_t)g->nodes[i].n_in;
    g->use_start = calloc((size_t)nt + 2, sizeof(int));
    g->use_node = malloc((total + 1) * sizeof(int));
    g->use_slot = malloc((total + 1) * sizeof(int));
    int *fill = calloc((size_t)nt + 1, sizeof(int));
    if (!g->use_start || !g->use_node || !g->use_slot || !fill) {
        free(fill);
        free(g->use_start); free(g->use_node); free(g->use_slot);
        g->use_start = g->use_node = g->use_slot = NULL;
        return -1;
    }
    for (int i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            for (int k = 0; k < g->nodes[i].n_in; k++)
                if (g->nodes[i].in[k] >= 0)
                    g->use_start[g->nodes[i].in[k] + 1]++;
    for (int t = 0; t < nt; t++)
        g->use_start[t + 1] += g->use_start[t];
    for (int i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            for (int k = 0; k < g->nodes[i].n_in; k++) {
                int t = g->nodes[i].in[k];
                if (t < 0)
                    continue;
                int at = g->use_start[t] + fill[t]++;
                g->use_node[at] = i;
                g->use_slot[at] = k;
            }
    free(fill);
    g->uses_valid = 1;
    return 0;
}

int ir_use_count(const IrGraph *g, int t)
{
    int c = g->use_start[t + 1] - g->use_start[t];
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == t)
            c++;
    return c;
}

/* Renumbers tensors: keeps graph inputs, outputs and every tensor a live
 * node refers to, in their order; rebuilds the name hash. */
static void compact_tensors(IrGraph *g)
{
    int nt = g->n_tensors;
    int *map = malloc(((size_t)nt + 1) * sizeof *map);
    if (!map)
        return;                                       /* keeping unreferenced tensors is harmless */
    for (int t = 0; t < nt; t++)
        map[t] = -1;
    for (int i = 0; i < g->n_inputs; i++)
        map[g->inputs[i]] = 0;
    for (int i = 0; i < g->n_outputs; i++)
        map[g->outputs[i]] = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                map[n->in[k]] = 0;
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0)
                map[n->out[k]] = 0;
    }
    int w = 0;
    for (int t = 0; t < nt; t++)
        if (map[t] == 0) {
            map[t] = w;
            g->tensors[w++] = g->tensors[t];
        }
    g->n_tensors = w;
    for (int i = 0; i < g->n_inputs; i++)
        g->inputs[i] = map[g->inputs[i]];
    for (int i = 0; i < g->n_outputs; i++)
        g->outputs[i] = map[g->outputs[i]];
    for (int i = 0; i < g->n_nodes; i++) {
        IrNode *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                n->in[k] = map[n->in[k]];
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0)
                n->out[k] = map[n->out[k]];
    }
    free(map);
    if (g->hash_cap && hash_rebuild(g, g->hash_cap))
        abort();                                      /* out of memory rebuilding a small index */
}

void ir_compact(IrGraph *g)
{
    int w = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            g->nodes[w++] = g->nodes[i];
    g->n_nodes = w;
    compact_tensors(g);
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].kind == IR_TK_VALUE)
            g->tensors[t].producer = -1;
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_out; k++)
            if (g->nodes[i].out[k] >= 0)
                g->tensors[g->nodes[i].out[k]].producer = i;
    g->uses_valid = 0;
}
