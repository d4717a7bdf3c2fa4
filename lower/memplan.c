/* lower/memplan.c — workspace planning: one workspace per model, every
 * intermediate buffer a 64-byte aligned slice of it.
 *
 * 1. Liveness: for each workspace buffer (aliases count as their root), the
 *    interval [first kernel touching it, last kernel touching it] in kernel
 *    order.
 * 2. In place: an elementwise kernel's output takes over an input buffer
 *    that dies in that kernel when both have the same shape (as the kernel
 *    sees them), dtype and size: element i is read before element i is
 *    written and nothing else is touched.  The two share one slot whose
 *    interval is the union.
 *    (Not with reuse off, -O0: every buffer keeps a slice of its own, so
 *    that each intermediate tensor can still be read after a run.)
 * 3. Placement: first fit — each slot at the lowest aligned offset where it
 *    overlaps no placed slot whose interval intersects its own — in four
 *    orders (decreasing size, first use, size x lifetime, lifetime); the
 *    smallest plan is kept.
 * workspace_bytes is the end of the highest slot. */
#include "lower/lower.h"
#include "runtime/dlcc_abi.h"   /* DLCC_WORKSPACE_ALIGN */

#include <stdlib.h>
#include <string.h>

#define ALIGN DLCC_WORKSPACE_ALIGN

typedef struct Slot {
    int64_t size;          /* aligned bytes */
    int first, last;       /* kernel interval; first < 0: never used */
    int64_t offset;
    int group;             /* in-place union: the slot holding this one, or itself */
    int taken;             /* kernel where an output took this slot over in place, or -1 */
} Slot;

static int64_t align_up(int64_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

static int root_buf(const LoopProgram *p, int b)
{
    while (p->bufs[b].alias_of >= 0)
        b = p->bufs[b].alias_of;
    return b;
}

static int group_of(Slot *s, int b)
{
    while (s[b].group != b)
        b = s[b].group = s[s[b].group].group;
    return b;
}

typedef struct Live {
    const LoopProgram *p;
    Slot *s;
    int k;
} Live;

static void live_use(void *ctx, int buf, int store)
{
    (void)store;
    Live *l = ctx;
    int r = root_buf(l->p, buf);
    Slot *s = &l->s[r];
    if (s->first < 0)
        s->first = l->k;
    s->last = l->k;
}

/* Liveness of every buffer (used for workspace roots only). */
static Slot *liveness(const LoopProgram *p)
{
    Slot *s = calloc((size_t)(p->n_bufs > 0 ? p->n_bufs : 1), sizeof *s);
    if (!s)
        return NULL;
    for (int b = 0; b < p->n_bufs; b++) {
        s[b].first = s[b].last = -1;
        s[b].group = b;
        s[b].taken = -1;
        s[b].size = align_up(p->bufs[b].bytes);
    }
    Live l = { p, s, 0 };
    for (l.k = 0; l.k < p->n_kernels; l.k++)
        loop_stmt_buffers(p->kernels[l.k].body, live_use, &l);
    return s;
}

static int is_ws_root(const LoopProgram *p, int b)
{
    return p->bufs[b].storage == LOOP_ST_WORKSPACE && p->bufs[b].alias_of < 0;
}

/* ------------------------------------------------------------- in place */

typedef struct InPlace {
    const LoopProgram *p;
    Slot *s;
    int k;
    int loads[64], n_loads;
    int stores[8], n_stores;
} InPlace;

static void ip_use(void *ctx, int buf, int store)
{
    InPlace *c = ctx;
    int *arr = store ? c->stores : c->loads, *n = store ? &c->n_stores : &c->n_loads;
    int cap = store ? 8 : 64;
    for (int i = 0; i < *n; i++)
        if (arr[i] == buf)
            return;
    if (*n < cap)
        arr[(*n)++] = buf;
    else
        *n = cap + 1;                     /* too many to reason about: no in-place */
}

static void in_place(const LoopProgram *p, const IrGraph *g, Slot *s)
{
    for (int k = 0; k < p->n_kernels; k++) {
        const LoopKernel *kn = &p->kernels[k];
        if (!g || kn->first_node < 0 || kn->n_nodes != 1 || kn->first_node >= g->n_nodes ||
            !(ir_op_info(g->nodes[kn->first_node].op)->flags & IR_OPF_EW))
            continue;
        InPlace c = { .p = p, .s = s, .k = k };
        loop_stmt_buffers(kn->body, ip_use, &c);
        if (c.n_loads > 64 || c.n_stores > 8)
            continue;
        for (int j = 0; j < c.n_stores; j++) {
            int o = c.stores[j];
            if (!is_ws_root(p, o) || s[o].first != k)
                continue;
            for (int i = 0; i < c.n_loads; i++) {
                int in = c.loads[i], r = root_buf(p, in);
                if (!is_ws_root(p, r) || r == o || s[group_of(s, r)].last != k || s[r].size != s[o].size ||
                    loop_buf_has_halo(&p->bufs[r]) || loop_buf_has_halo(&p->bufs[o]) ||
                    p->bufs[in].dtype != p->bufs[o].dtype || !ir_shape_equal(&p->bufs[in].shape, &p->bufs[o].shape))
                    continue;
                int gr = group_of(s, r);
                if (s[gr].taken == k)
                    continue;                 /* one output per dying input */
                s[gr].taken = k;
                s[o].group = gr;
                if (s[o].last > s[gr].last)
                    s[gr].last = s[o].last;
                break;
            }
        }
    }
}

/* ------------------------------------------------------------ placement */

typedef struct Key { int64_t size; int first; int id; } Key;
typedef struct Span { int64_t offset, end; } Span;

static int by_size(const void *a, const void *b)
{
    const Key *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->id - y->id;
}

static int by_offset(const void *a, const void *b)
{
    const Span *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The orders first fit tries: decreasing size (ties: earlier first use);
 * earlier first use; decreasing size x lifetime; longer lifetime (ties,
 * always: the first order's). */
#define N_ORDERS 7

static int64_t span(const Slot *a) { return (int64_t)(a->last - a->first + 1); }

static int key_before(const Slot *s, const Key *a, const Key *b, int k)
{
    int64_t va = 0, vb = 0;
    switch (k) {
    case 1: va = -a->first, vb = -b->first; break;
    case 2: va = a->size * span(&s[a->id]), vb = b->size * span(&s[b->id]); break;
    case 3: va = span(&s[a->id]), vb = span(&s[b->id]); break;
    case 4: va = -s[a->id].last, vb = -s[b->id].last; break;
    case 5: va = s[a->id].last, vb = s[b->id].last; break;
    case 6: va = a->first, vb = b->first; break;
    default: break;
    }
    if (va != vb)
        return va > vb;
    return by_size(a, b) < 0;
}

/* Sorts order[0..n) for order k (merge sort: stable, no global state). */
static void sort_keys(const Slot *s, Key *order, int n, int k)
{
    qsort(order, (size_t)n, sizeof *order, by_size);          /* a canonical start */
    if (k == 0)
        return;
    for (int w = 1; w < n; w *= 2)                             /* bottom-up merge, in place via a rotation */
        for (int lo = 0; lo + w < n; lo += 2 * w) {
            int mid = lo + w, hi = lo + 2 * w < n ? lo + 2 * w : n;
            for (int i = lo, j = mid; i < j && j < hi;) {
                if (!key_before(s, &order[j], &order[i], k)) {
                    i++;
                    continue;
                }
                Key t = order[j];                              /* rotate order[i..j] right by one */
                memmove(&order[i + 1], &order[i], (size_t)(j - i) * sizeof *order);
                order[i] = t;
                i++, j++;
            }
        }
}

/* First fit of the slots in order: each at the lowest offset where it
 * overlaps no placed slot whose interval intersects its own.  Returns the
 * end of the highest slot. */
static int64_t place(Slot *s, const Key *order, int n, int *placed, Span *ov)
{
    int64_t total = 0;
    int np = 0;
    for (int i = 0; i < n; i++) {
        Slot *a = &s[order[i].id];
        int no = 0;
        for (int j = 0; j < np; j++) {
            const Slot *b = &s[placed[j]];
            if (b->first <= a->last && a->first <= b->last)
                ov[no++] = (Span){ b->offset, b->offset + b->size };
        }
        qsort(ov, (size_t)no, sizeof *ov, by_offset);
        int64_t off = 0;
        for (int j = 0; j < no && ov[j].offset < off + a->size; j++)
            if (ov[j].end > off)
                off = ov[j].end;
        a->offset = off;
        if (off + a->size > total)
            total = off + a->size;
        placed[np++] = order[i].id;
    }
    return total;
}

int low_plan_memory(LoopProgram *p, const IrGraph *g, UtilDiag *d) { return low_plan_memory_opt(p, g, 1, d); }

int low_plan_memory_opt(LoopProgram *p, const IrGraph *g, int reuse, UtilDiag *d)
{
    size_t nb = (size_t)(p->n_bufs > 0 ? p->n_bufs : 1);
    Slot *s = liveness(p);
    Key *order = malloc(nb * sizeof *order);
    int *placed = malloc(nb * sizeof *placed);
    Span *ov = malloc(nb * sizeof *ov);
    if (!s || !order || !placed || !ov) {
        free(s);
        free(order);
        free(placed);
        free(ov);
        return util_error(d, util_loc_file(g ? g->file : NULL), "out of memory while planning memory");
    }
    if (reuse)
        in_place(p, g, s);
    int n = 0;
    for (int b = 0; b < p->n_bufs; b++)
        if (is_ws_root(p, b) && group_of(s, b) == b && s[b].first >= 0) {
            if (!reuse) {                         /* every buffer live throughout: no slot shared */
                s[b].first = 0;
                s[b].last = p->n_kernels;
            }
            order[n++] = (Key){ s[b].size, s[b].first, b };
        }
    /* First fit in several orders; the smallest plan wins (ties: the first order). */
    int64_t best = -1;
    int best_k = 0;
    for (int k = 0; k < N_ORDERS; k++) {
        sort_keys(s, order, n, k);
        int64_t total = place(s, order, n, placed, ov);
        if (best < 0 || total < best) {
            best = total;
            best_k = k;
        }
    }
    sort_keys(s, order, n, best_k);
    int64_t total = place(s, order, n, placed, ov);
    for (int b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].storage == LOOP_ST_WORKSPACE)
            p->bufs[b].offset = s[group_of(s, root_buf(p, b))].offset;
    p->workspace_bytes = total;
    p->workspace_align = ALIGN;
    free(s);
    free(order);
    free(placed);
    free(ov);
    return 0;
}

int64_t low_workspace_lower_bound(const LoopProgram *p)
{
    Slot *s = liveness(p);
    if (!s)
        return -1;
    int64_t best = 0;
    for (int k = 0; k < p->n_kernels; k++) {
        int64_t sum = 0;
        for (int b = 0; b < p->n_bufs; b++)
            if (is_ws_root(p, b) && p->bufs[b].tensor >= 0 && s[b].first >= 0 && s[b].first <= k && k <= s[b].last)
                sum += align_up(ir_shape_numel(&p->bufs[b].shape) * (int64_t)ir_dtype_size(p->bufs[b].dtype));
        if (sum > best)
            best = sum;
    }
    free(s);
    return best;
}
