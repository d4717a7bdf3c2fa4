/* targets/hetero/devices.c — device files (docs/targets/hetero.md "Device
 * files"): the devices a model may be partitioned across and the links
 * between them, read strictly (frontend/fe_json.h: unknown and duplicate
 * keys, wrong types and ranges are errors at FILE:LINE:COL); the lookup of
 * the file; the --devices list; the writer `dlcc calibrate` uses. */
#include "targets/hetero/hetero_impl.h"
#include "frontend/fe_json.h"

#include <stdlib.h>
#include <string.h>

static const char *const top_keys[] = { "format", "version", "devices", "links", NULL };
static const char *const device_keys[] = { "name", "kind", "peak_gflops", "bandwidth_gbs", "launch_us", "part",
                                           "clock_mhz", "cores", "note", NULL };
static const char *const link_keys[] = { "from", "to", "bandwidth_gbs", "latency_us", "both_directions", "note",
                                         NULL };
static const char *const kind_names[] = { "cpu", "gpu", "fpga" };

const char *tgt_hetero_kind_name(TgtDevKind k)
{
    return (unsigned)k < 3 ? kind_names[k] : "?";
}

typedef struct Rd {
    FeJSrc s;
    TgtDeviceFile *f;
} Rd;

static const FeJPath ROOT = { NULL, NULL, 0 };

/* Member `key` of o as a number in [lo, hi] (> lo when open); absent and
 * not required: *out unchanged, 0. */
static int num(Rd *r, const FeJPath *p, const json_t *o, const char *key, int required, double lo, double hi,
               int open, double *out)
{
    json_t *v;
    FeJPath kp = FE_JKEY(p, key);
    char what[64];
    snprintf(what, sizeof what, "'%s'", key);
    if (fe_jmember(&r->s, p, o, key, required, &v) || (v && fe_jnum(&r->s, &kp, v, lo, hi, out, what)))
        return -1;
    if (v && open && *out <= lo)
        return fe_jerr(&r->s, &kp, 0, "%s must be greater than %g", what, lo);
    return 0;
}

/* Member `key` of o as a string (copied into the file's arena); absent and
 * not required: NULL. */
static int str(Rd *r, const FeJPath *p, const json_t *o, const char *key, int required, const char **out)
{
    json_t *v;
    FeJPath kp = FE_JKEY(p, key);
    char what[64];
    snprintf(what, sizeof what, "'%s'", key);
    *out = NULL;
    const char *s;
    if (fe_jmember(&r->s, p, o, key, required, &v) || (v && fe_jstr(&r->s, &kp, v, &s, what)))
        return -1;
    if (v && !(*out = util_arena_strdup(&r->f->arena, s)))
        return fe_jerr(&r->s, &kp, 0, "out of memory");
    return 0;
}

/* Names: 1..63 of [A-Za-z0-9._-] (part names: no '.'). */
static int name_ok(const char *s, int dot)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '_' || (dot && c == '.')))
            return 0;
    }
    return 1;
}

static int find_device(const TgtDeviceFile *f, const char *name)
{
    for (int i = 0; i < f->n_devices; i++)
        if (strcmp(f->devices[i].name, name) == 0)
            return i;
    return -1;
}

/* The keys of a device that only some kinds have. */
static int kind_keys(Rd *r, const FeJPath *p, const json_t *o, TgtDevKind k)
{
    static const struct { const char *key; unsigned kinds; const char *why; } only[] = {
        { "peak_gflops", 1u << TGT_DEV_CPU | 1u << TGT_DEV_GPU, "an FPGA's times are the FPGA target's estimate" },
        { "bandwidth_gbs", 1u << TGT_DEV_CPU | 1u << TGT_DEV_GPU, "an FPGA's times are the FPGA target's estimate" },
        { "part", 1u << TGT_DEV_FPGA, "only an FPGA has one" },
        { "clock_mhz", 1u << TGT_DEV_FPGA, "only an FPGA has one" },
        { "cores", 1u << TGT_DEV_CPU, "only a CPU has them" },
    };
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++)
        if (json_object_get(o, only[i].key) && !(only[i].kinds & 1u << k)) {
            FeJPath kp = FE_JKEY(p, only[i].key);
            static const char *const a_kind[] = { "a CPU", "a GPU", "an FPGA" };
            return fe_jerr(&r->s, &kp, 1, "'%s' does not apply to %s (%s)", only[i].key, a_kind[k], only[i].why);
        }
    return 0;
}

static int read_device(Rd *r, const FeJPath *p, const json_t *o, TgtDevice *dv)
{
    const char *kind;
    memset(dv, 0, sizeof *dv);
    if (fe_jobject(&r->s, p, o, device_keys, "a device") || str(r, p, o, "name", 1, &dv->name) ||
        str(r, p, o, "kind", 1, &kind) || str(r, p, o, "note", 0, &dv->note))
        return -1;
    FeJPath np = FE_JKEY(p, "name"), kp = FE_JKEY(p, "kind");
    if (!name_ok(dv->name, 1))
        return fe_jerr(&r->s, &np, 0, "a device name has 1 to 63 letters, digits, '.', '-' or '_', not '%s'",
                       dv->name);
    if (find_device(r->f, dv->name) >= 0)
        return fe_jerr(&r->s, &np, 0, "a second device named '%s'", dv->name);
    int k = 0;
    while (k < 3 && strcmp(kind_names[k], kind))
        k++;
    if (k == 3)
        return fe_jerr(&r->s, &kp, 0, "unknown device kind '%s' (cpu, gpu or fpga)", kind);
    dv->kind = (TgtDevKind)k;
    if (kind_keys(r, p, o, dv->kind) || num(r, p, o, "launch_us", 1, 0, 1e6, 0, &dv->launch_us))
        return -1;
    if (dv->kind != TGT_DEV_FPGA) {
        if (num(r, p, o, "peak_gflops", 1, 0, 1e7, 1, &dv->peak_gflops) ||
            num(r, p, o, "bandwidth_gbs", 1, 0, 1e6, 1, &dv->bandwidth_gbs))
            return -1;
        json_t *c = json_object_get(o, "cores");
        FeJPath cp = FE_JKEY(p, "cores");
        int64_t ci = 0;
        if (c && fe_jint(&r->s, &cp, c, 1, 4096, &ci, "'cores'"))
            return -1;
        dv->cores = (int)ci;
        return 0;
    }
    FeJPath pp = FE_JKEY(p, "part");
    if (str(r, p, o, "part", 1, &dv->part) || num(r, p, o, "clock_mhz", 1, 0, 10000, 1, &dv->clock_mhz))
        return -1;
    if (!name_ok(dv->part, 0))
        return fe_jerr(&r->s, &pp, 0, "a part name has 1 to 63 letters, digits, '-' or '_', not '%s'", dv->part);
    return 0;
}

static int link_end(Rd *r, const FeJPath *p, const json_t *o, const char *key, int *dev)
{
    const char *name;
    if (str(r, p, o, key, 1, &name))
        return -1;
    *dev = find_device(r->f, name);
    if (*dev < 0) {
        FeJPath kp = FE_JKEY(p, key);
        return fe_jerr(&r->s, &kp, 0, "no device named '%s' in this file", name);
    }
    return 0;
}

static int add_link(Rd *r, const FeJPath *p, const TgtLink *l)
{
    for (int i = 0; i < r->f->n_links; i++)
        if (r->f->links[i].from == l->from && r->f->links[i].to == l->to)
            return fe_jerr(&r->s, p, 0, "a second link from '%s' to '%s'", r->f->devices[l->from].name,
                           r->f->devices[l->to].name);
    r->f->links[r->f->n_links++] = *l;
    return 0;
}

static int read_link(Rd *r, const FeJPath *p, const json_t *o)
{
    TgtLink l = { 0 };
    int both = 0;
    json_t *v;
    FeJPath bp = FE_JKEY(p, "both_directions");
    if (fe_jobject(&r->s, p, o, link_keys, "a link") || link_end(r, p, o, "from", &l.from) ||
        link_end(r, p, o, "to", &l.to) || num(r, p, o, "bandwidth_gbs", 1, 0, 1e6, 1, &l.bandwidth_gbs) ||
        num(r, p, o, "latency_us", 1, 0, 1e6, 0, &l.latency_us) || str(r, p, o, "note", 0, &l.note) ||
        fe_jmember(&r->s, p, o, "both_directions", 0, &v) || (v && fe_jbool(&r->s, &bp, v, &both,
                                                                             "'both_directions'")))
        return -1;
    if (l.from == l.to) {
        FeJPath tp = FE_JKEY(p, "to");
        return fe_jerr(&r->s, &tp, 0, "a link joins two different devices ('%s' twice)",
                       r->f->devices[l.from].name);
    }
    if (add_link(r, p, &l))
        return -1;
    TgtLink back = l;
    back.from = l.to;
    back.to = l.from;
    return both ? add_link(r, p, &back) : 0;
}

int tgt_hetero_read_devices(const char *path, const char *text, size_t len, TgtDeviceFile *f, UtilDiag *d)
{
    memset(f, 0, sizeof *f);
    util_arena_init(&f->arena);
    f->path = util_arena_strdup(&f->arena, path);
    Rd r = { .s = { .path = f->path, .text = text, .len = len, .byte_base = -1, .d = d }, .f = f };
    if (!f->path)
        return util_error(d, util_loc_file(path), "out of memory");
    json_t *root = fe_json_parse(&r.s), *v, *devs, *links;
    if (!root)
        return -1;
    int rc = -1;
    const char *fmt;
    int64_t version;
    FeJPath fp = FE_JKEY(&ROOT, "format"), vp = FE_JKEY(&ROOT, "version"), dp = FE_JKEY(&ROOT, "devices"),
            lp = FE_JKEY(&ROOT, "links");
    if (fe_jobject(&r.s, &ROOT, root, top_keys, "a device file") || fe_jmember(&r.s, &ROOT, root, "format", 1, &v) ||
        fe_jstr(&r.s, &fp, v, &fmt, "'format'"))
        goto done;
    if (strcmp(fmt, "dlcc-devices")) {
        fe_jerr(&r.s, &fp, 0, "'format' must be \"dlcc-devices\", not \"%s\"", fmt);
        goto done;
    }
    if (fe_jmember(&r.s, &ROOT, root, "version", 1, &v) || fe_jint(&r.s, &vp, v, 1, 1, &version, "'version'") ||
        fe_jmember(&r.s, &ROOT, root, "devices", 1, &devs) || fe_jarray(&r.s, &dp, devs, "'devices'") ||
        fe_jmember(&r.s, &ROOT, root, "links", 0, &links) || (links && fe_jarray(&r.s, &lp, links, "'links'")))
        goto done;
    size_t nd = json_array_size(devs), nl = links ? json_array_size(links) : 0;
    if (nd == 0 || nd > TGT_HT_MAX_DEVICES) {
        fe_jerr(&r.s, &dp, 0, "a device file has 1 to %d devices, not %zu", TGT_HT_MAX_DEVICES, nd);
        goto done;
    }
    if (nl > TGT_HT_MAX_LINKS / 2) {
        fe_jerr(&r.s, &lp, 0, "a device file has at most %d links, not %zu", TGT_HT_MAX_LINKS / 2, nl);
        goto done;
    }
    f->devices = util_arena_array(&f->arena, nd, sizeof *f->devices);
    f->links = util_arena_array(&f->arena, 2 * nl + 1, sizeof *f->links);
    if (!f->devices || !f->links) {
        util_error(d, util_loc_file(path), "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nd; i++) {
        FeJPath ep = FE_JIDX(&dp, i);
        if (read_device(&r, &ep, json_array_get(devs, i), &f->devices[i]))
            goto done;
        f->n_devices++;
    }
    for (size_t i = 0; i < nl; i++) {
        FeJPath ep = FE_JIDX(&lp, i);
        if (read_link(&r, &ep, json_array_get(links, i)))
            goto done;
    }
    rc = 0;
done:
    json_decref(root);
    return rc;
}

int tgt_hetero_load_devices(const char *path, TgtDeviceFile *f, UtilDiag *d)
{
    if (!path || !*path)
        path = getenv("DLCC_DEVICE_FILE");
    if (!path || !*path)
        return tgt_hetero_read_devices(TGT_HT_BUILTIN_NAME, tgt_hetero_builtin_devices,
                                       strlen(tgt_hetero_builtin_devices), f, d);
    char *text = NULL;
    size_t len = 0;
    memset(f, 0, sizeof *f);
    util_arena_init(&f->arena);
    if (util_read_file(path, TGT_HT_MAX_FILE_BYTES, &text, &len, d))
        return -1;
    util_arena_free(&f->arena);
    int rc = tgt_hetero_read_devices(path, text, len, f, d);
    free(text);
    return rc;
}

void tgt_hetero_devices_free(TgtDeviceFile *f)
{
    util_arena_free(&f->arena);
    memset(f, 0, sizeof *f);
}

int tgt_hetero_pick_devices(const TgtDeviceFile *f, const char *list, int *ids, int max, int *n, int *host,
                            UtilDiag *d)
{
    UtilLoc at = util_loc_file(f->path);
    *n = 0;
    *host = -1;
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char name[64];
        if (len == 0 || len >= sizeof name)
            return util_error(d, at, "--devices wants a comma-separated list of device names or kinds, not '%s'",
                              list);
        memcpy(name, p, len);
        name[len] = 0;
        int id = find_device(f, name);
        for (int k = 0; id < 0 && k < 3; k++)
            for (int i = 0; id < 0 && !strcmp(name, kind_names[k]) && i < f->n_devices; i++)
                if (f->devices[i].kind == (TgtDevKind)k)
                    id = i;
        if (id < 0) {
            char known[512] = "";
            for (int i = 0; i < f->n_devices; i++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                         f->devices[i].name);
            int kind = !strcmp(name, "cpu") || !strcmp(name, "gpu") || !strcmp(name, "fpga");
            return util_error(d, at, kind ? "no %s device in this file (it has: %s)"
                                          : "no device named '%s' (the file has: %s; or a kind: cpu, gpu, fpga)",
                              name, known);
        }
        for (int i = 0; i < *n; i++)
            if (ids[i] == id)
                return util_error(d, at, "--devices names device '%s' twice", f->devices[id].name);
        if (*n >= max)
            return util_error(d, at, "--devices names more than %d devices", max);
        ids[(*n)++] = id;
        p = e ? e + 1 : p + len;
        if (e && !*p)
            return util_error(d, at, "--devices wants a comma-separated list of device names or kinds, not '%s'",
                              list);
    }
    if (*n == 0)
        return util_error(d, at, "--devices names no device");
    for (int i = 0; i < *n && *host < 0; i++)
        if (f->devices[ids[i]].kind == TGT_DEV_CPU)
            *host = ids[i];
    for (int i = 0; i < f->n_devices && *host < 0; i++)
        if (f->devices[i].kind == TGT_DEV_CPU)
            *host = i;
    if (*host < 0)
        return util_error(d, at, "the file has no CPU device to hold the model's inputs and outputs");
    return 0;
}

/* A JSON string literal (names and notes are plain text; escapes what JSON
 * needs). */
static void put_str(UtilBuf *o, const char *s)
{
    util_buf_put(o, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            util_buf_printf(o, "\\%c", c);
        else if (c < 0x20)
            util_buf_printf(o, "\\u%04x", c);
        else
            util_buf_put(o, s, 1);
    }
    util_buf_put(o, "\"", 1);
}

void tgt_hetero_write_devices(const TgtDevice *dev, int n_dev, const TgtLink *links, int n_links, UtilBuf *out)
{
    util_buf_printf(out, "{\n  \"format\": \"dlcc-devices\",\n  \"version\": 1,\n  \"devices\": [");
    for (int i = 0; i < n_dev; i++) {
        const TgtDevice *v = &dev[i];
        util_buf_printf(out, "%s\n    {\"name\": ", i ? "," : "");
        put_str(out, v->name);
        util_buf_printf(out, ", \"kind\": \"%s\",", tgt_hetero_kind_name(v->kind));
        if (v->kind == TGT_DEV_FPGA) {
            util_buf_printf(out, " \"part\": ");
            put_str(out, v->part);
            util_buf_printf(out, ", \"clock_mhz\": %.6g,", v->clock_mhz);
        } else {
            util_buf_printf(out, " \"peak_gflops\": %.4g, \"bandwidth_gbs\": %.4g,", v->peak_gflops,
                            v->bandwidth_gbs);
            if (v->cores > 0)
                util_buf_printf(out, " \"cores\": %d,", v->cores);
        }
        util_buf_printf(out, " \"launch_us\": %.4g", v->launch_us);
        if (v->note) {
            util_buf_printf(out, ",\n     \"note\": ");
            put_str(out, v->note);
        }
        util_buf_printf(out, "}");
    }
    util_buf_printf(out, "\n  ],\n  \"links\": [");
    for (int i = 0; i < n_links; i++) {
        util_buf_printf(out, "%s\n    {\"from\": ", i ? "," : "");
        put_str(out, dev[links[i].from].name);
        util_buf_printf(out, ", \"to\": ");
        put_str(out, dev[links[i].to].name);
        util_buf_printf(out, ", \"bandwidth_gbs\": %.4g, \"latency_us\": %.4g}", links[i].bandwidth_gbs,
                        links[i].latency_us);
    }
    util_buf_printf(out, "%s]\n}\n", n_links ? "\n  " : "");
}
