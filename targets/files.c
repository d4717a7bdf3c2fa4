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
    fs->n = 0;
}

/* Adds NAME.ext holding (a copy of) buf. */
int tgt_add_file(TgtFiles *fs, const char *name, const char *ext, const UtilBuf *buf, UtilDiag *d)
{
    if (fs->n >= TGT_MAX_FILES)
        return util_error(d, util_loc_file(NULL), "internal error: too many output files");
    TgtFile *f = &fs->f[fs->n++];
    size_t n = strlen(name) + strlen(ext) + 1;
    f->name = malloc(n);
    util_buf_init(&f->data);
    if (f->name)
        snprintf(f->name, n, "%s%s", name, ext);
    util_buf_put(&f->data, buf->data ? buf->data : "", buf->len);
    if (!f->name || buf->oom || f->data.oom)
        return util_error(d, util_loc_file(NULL), "out of memory writing %s%s", name, ext);
    return 0;
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
