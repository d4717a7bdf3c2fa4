/* targets/files.c — the files a target hands back (TgtFiles) and the ones
 * every target writes beside its own: NAME.h, NAME.dot, NAME.report.json. */
#include "targets/targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tgt_files_free(TgtFiles *fs)
{
    for (int i = 0; i < fs->n; i++) {
        free(fs->f[i].name);
        util_buf_free(&fs->f[i].data);
    }
    free(fs->f);
    fs->f = NULL;
    fs->n = fs->cap = 0;
}

/* A new entry named NAME.ext with an empty buffer, or NULL out of memory. */
static TgtFile *new_file(TgtFiles *fs, const char *name, const char *ext)
{
    if (fs->n == fs->cap) {
        int cap = fs->cap ? 2 * fs->cap : 8;
        TgtFile *f = realloc(fs->f, (size_t)cap * sizeof *f);
        if (!f)
            return NULL;
        fs->f = f;
        fs->cap = cap;
    }
    size_t n = strlen(name) + strlen(ext) + 1;
    char *nm = malloc(n);
    if (!nm)
        return NULL;
    snprintf(nm, n, "%s%s", name, ext);
    TgtFile *f = &fs->f[fs->n++];
    f->name = nm;
    util_buf_init(&f->data);
    return f;
}

/* Adds NAME.ext holding (a copy of) buf. */
int tgt_add_file(TgtFiles *fs, const char *name, const char *ext, const UtilBuf *buf, UtilDiag *d)
{
    TgtFile *f = new_file(fs, name, ext);
    if (f)
        util_buf_put(&f->data, buf->data ? buf->data : "", buf->len);
    if (!f || buf->oom || f->data.oom)
        return util_error(d, util_loc_file(NULL), "out of memory writing %s%s", name, ext);
    return 0;
}

int tgt_take_file(TgtFiles *fs, const char *name, const char *ext, UtilBuf *buf, UtilDiag *d)
{
    TgtFile *f = buf->oom ? NULL : new_file(fs, name, ext);
    if (f)
        f->data = *buf;
    else
        util_buf_free(buf);
    util_buf_init(buf);
    return f ? 0 : util_error(d, util_loc_file(NULL), "out of memory writing %s%s", name, ext);
}

int tgt_add_common_files(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, const char *target,
                         const TgtHeader *h, TgtFiles *out, UtilDiag *d)
{
    UtilBuf text;
    util_buf_init(&text);
    int bad = 0;
    if (o->emit & TGT_EMIT_HEADER) {
        bad |= tgt_emit_header(g, p, o, h, &text, d) || tgt_add_file(out, o->name, ".h", &text, d);
        util_buf_free(&text);
    }
    if (!bad && (o->emit & TGT_EMIT_GRAPH)) {
        ir_print_dot(g, &text);
        bad |= tgt_add_file(out, o->name, ".dot", &text, d);
        util_buf_free(&text);
    }
    if (!bad && (o->emit & TGT_EMIT_REPORT)) {
        bad |= tgt_emit_report(g, p, o, h->stack_bytes, target, &text, d) ||
               tgt_add_file(out, o->name, ".report.json", &text, d);
        util_buf_free(&text);
    }
    return bad ? -1 : 0;
}
