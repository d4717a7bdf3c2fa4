/* codegen/context.c — the compilation context: LLVM targets, target machine,
 * module, builders and pass options are created in cg_ctx_init and disposed
 * in cg_ctx_dispose; the optimization passes and the emission of an object
 * or assembly file every driver (compile.c, jit.c, ptx.c) ends with. */
#include "codegen/cg_impl.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The backends dlcc supports.  LLVM's target registry is process-wide and
 * these calls are idempotent. */
static void init_targets(void)
{
#define CG_TARGET(T) \
    LLVMInitialize##T##TargetInfo(); \
    LLVMInitialize##T##Target(); \
    LLVMInitialize##T##TargetMC(); \
    LLVMInitialize##T##AsmPrinter();
    CG_TARGET(X86)
    CG_TARGET(AArch64)
    CG_TARGET(ARM)
    CG_TARGET(RISCV)
    CG_TARGET(NVPTX)
#undef CG_TARGET
}

/* A malloc'd copy of an LLVM message, which is disposed. */
static char *take_message(char *m)
{
    char *r = strdup(m ? m : "");
    LLVMDisposeMessage(m);
    return r;
}

char *cg_host_triple(void)
{
    char *def = LLVMGetDefaultTargetTriple();
    char *norm = LLVMNormalizeTargetTriple(def);
    LLVMDisposeMessage(def);
    return take_message(norm);
}

static int has_feature(const char *features, const char *f)
{
    size_t n = strlen(f);
    for (const char *q = features; q && (q = strstr(q, f)) != NULL; q += n)
        if ((q == features || q[-1] == ',') && (q[n] == ',' || q[n] == '\0'))
            return 1;
    return 0;
}

/* What the code for o may use, in bits (0: none): float SIMD
 * (cg_simd_bits), the 8-bit, 16-bit pair and bfloat16 dot products
 * (cg_dot_*_bits; x86, and AArch64's 8-bit ones), byte permutes across two
 * registers (cg_byte_permute_bits); mixed: the 8-bit dot product multiplies
 * unsigned by signed bytes itself (x86 VPDPBUSD, AArch64 USDOT), else only
 * signed by signed (AArch64 SDOT); mask: the narrowest element, in bytes,
 * that masked vector loads and stores take as one instruction (0: none). */
typedef struct TargetCaps { int simd, dot, bf16, i16, perm, mixed, mask; } TargetCaps;
static void target_caps(const CgOptions *o, int jit, TargetCaps *x);

static TargetCaps caps_of(const CgOptions *o, int jit)
{
    TargetCaps x;
    target_caps(o, jit, &x);
    return x;
}

int cg_simd_bits(const CgOptions *o, int jit) { return caps_of(o, jit).simd; }
int cg_dot_i8_bits(const CgOptions *o, int jit) { return caps_of(o, jit).dot; }
int cg_dot_i16_bits(const CgOptions *o, int jit) { return caps_of(o, jit).i16; }
int cg_dot_bf16_bits(const CgOptions *o, int jit) { return caps_of(o, jit).bf16; }
int cg_byte_permute_bits(const CgOptions *o, int jit) { return caps_of(o, jit).perm; }
int cg_dot_i8_mixed(const CgOptions *o, int jit) { return caps_of(o, jit).mixed; }
int cg_masked_bytes(const CgOptions *o, int jit) { return caps_of(o, jit).mask; }

/* AArch64 CPUs (LLVM's names) with the dot product extension (SDOT,
 * Armv8.2 DotProd), and those of them with the Int8 matrix multiply one too
 * (USDOT, Armv8.6 I8MM). */
static const char *const a64_dotprod[] = { "cortex-a55", "cortex-a65", "cortex-a65ae", "cortex-a75", "cortex-a76",
                                           "cortex-a76ae", "cortex-a77", "cortex-a78", "cortex-a78ae", "cortex-a78c",
                                           "cortex-x1", "cortex-x1c", "neoverse-e1", "neoverse-n1", "apple-a13",
                                           "apple-a14", "apple-m1", NULL };
static const char *const a64_i8mm[] = { "cortex-a710", "cortex-a715", "cortex-a720", "cortex-x2", "cortex-x3",
                                        "cortex-x4", "neoverse-n2", "neoverse-v1", "neoverse-v2", "apple-a15",
                                        "apple-a16", "apple-a17", "apple-m2", "apple-m3", "ampere1", "ampere1a",
                                        NULL };

static int listed(const char *const *list, const char *cpu)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(cpu, list[i]) == 0)
            return 1;
    return 0;
}

static void target_caps(const CgOptions *o, int jit, TargetCaps *x)
{
    int *simd = &x->simd, *dot = &x->dot, *bf16 = &x->bf16, *i16 = &x->i16, *perm = &x->perm;
    x->mixed = x->mask = 0;
    char *host = cg_host_triple();
    char *triple = o->triple && *o->triple ? take_message(LLVMNormalizeTargetTriple(o->triple)) : NULL;
    const char *t = triple ? triple : host ? host : "";
    int is_host = host && strcmp(t, host) == 0;
    int native = is_host && ((jit && !o->cpu) || (o->cpu && strcmp(o->cpu, "native") == 0));
    char *feat = o->features ? strdup(o->features) : native ? take_message(LLVMGetHostCPUFeatures()) : NULL;
    const char *cpu = o->cpu ? o->cpu : "generic";
    int bits = 0;
    *dot = *bf16 = *i16 = *perm = 0;
    if (strncmp(t, "x86_64", 6) == 0 || (t[0] == 'i' && strstr(t, "86-"))) {
        static const char *const avx512[] = { "skylake-avx512", "cascadelake", "cooperlake", "cannonlake",
                                              "icelake-client", "icelake-server", "tigerlake", "rocketlake",
                                              "sapphirerapids", "graniterapids", "emeraldrapids", "znver4",
                                              "znver5", "x86-64-v4", NULL };
        static const char *const avx[] = { "sandybridge", "ivybridge", "haswell", "broadwell", "skylake",
                                           "alderlake", "raptorlake", "meteorlake", "znver1", "znver2",
                                           "znver3", "x86-64-v3", "bdver1", "bdver2", "bdver3", "bdver4",
                                           "btver2", NULL };
        bits = 128;
        for (int i = 0; avx[i]; i++)
            if (strcmp(cpu, avx[i]) == 0)
                bits = 256;
        for (int i = 0; avx512[i]; i++)
            if (strcmp(cpu, avx512[i]) == 0)
                bits = 512;
        if (feat && has_feature(feat, "+avx"))
            bits = 256;
        if (feat && has_feature(feat, "+avx512f"))
            bits = 512;
        if (feat && has_feature(feat, "-avx"))
            bits = 128;
        /* VPDPBUSD: AVX512-VNNI (512 bits; 256 with AVX512VL) or AVX-VNNI (256) */
        static const char *const vnni512[] = { "cascadelake", "cooperlake", "icelake-client", "icelake-server",
                                               "tigerlake", "rocketlake", "sapphirerapids", "graniterapids",
                                               "emeraldrapids", "znver4", "znver5", NULL };
        static const char *const vnni256[] = { "alderlake", "raptorlake", "meteorlake", "arrowlake", "lunarlake",
                                               "gracemont", "sierraforest", "grandridge", NULL };
        for (int i = 0; !feat && vnni512[i]; i++)
            if (strcmp(cpu, vnni512[i]) == 0)
                *dot = 512;
        for (int i = 0; !feat && vnni256[i]; i++)
            if (strcmp(cpu, vnni256[i]) == 0)
                *dot = 256;
        if (feat && has_feature(feat, "+avx512vnni") && has_feature(feat, "+avx512vl") && bits >= 512)
            *dot = 512;
        else if (feat && has_feature(feat, "+avxvnni") && bits >= 256)
            *dot = 256;
        if (*dot > bits)
            *dot = bits;
        x->mixed = *dot > 0;                                    /* VPDPBUSD: unsigned by signed */
        /* VDPBF16PS: AVX512-BF16 (with AVX512VL for the narrower forms) */
        static const char *const bf16cpu[] = { "cooperlake", "sapphirerapids", "graniterapids", "emeraldrapids",
                                               "znver4", "znver5", NULL };
        for (int i = 0; !feat && bf16cpu[i]; i++)
            if (strcmp(cpu, bf16cpu[i]) == 0)
                *bf16 = 512;
        if (feat && has_feature(feat, "+avx512bf16") && has_feature(feat, "+avx512vl") && bits >= 512)
            *bf16 = 512;
        if (*bf16 > bits)
            *bf16 = bits;
        /* VPMADDWD on 256 bits: AVX2; on 512: AVX512BW (every CPU of the avx512 list has it) */
        static const char *const avx2cpu[] = { "haswell", "broadwell", "skylake", "alderlake", "raptorlake",
                                               "meteorlake", "znver1", "znver2", "znver3", "x86-64-v3", "bdver4",
                                               NULL };
        for (int i = 0; !feat && avx2cpu[i]; i++)
            if (strcmp(cpu, avx2cpu[i]) == 0)
                *i16 = 256;
        if (!feat && bits >= 512)
            *i16 = 512;
        if (feat && has_feature(feat, "+avx2"))
            *i16 = 256;
        if (feat && has_feature(feat, "+avx512bw"))
            *i16 = 512;
        if (*i16 > bits)
            *i16 = bits;
        /* VPERMI2B on 512 bits: AVX512-VBMI (a 256-byte table in four registers, two permutes) */
        static const char *const vbmicpu[] = { "cannonlake", "icelake-client", "icelake-server", "tigerlake",
                                               "rocketlake", "sapphirerapids", "graniterapids", "emeraldrapids",
                                               "znver4", "znver5", NULL };
        for (int i = 0; !feat && vbmicpu[i]; i++)
            if (strcmp(cpu, vbmicpu[i]) == 0)
                *perm = 512;
        if (feat && has_feature(feat, "+avx512vbmi") && has_feature(feat, "+avx512bw") && bits >= 512)
            *perm = 512;
        if (*perm > bits)
            *perm = bits;
        /* masked moves: AVX-512 of any element with BW (every CPU of the avx512
         * list has it), of 4 and 8 bytes without; AVX VMASKMOVPS / AVX2
         * VPMASKMOVD of 4 and 8 bytes; SSE none (LLVM branches per lane) */
        x->mask = bits >= 512 ? (!feat || has_feature(feat, "+avx512bw") ? 1 : 4) : bits >= 256 ? 4 : 0;
    } else if (strncmp(t, "aarch64", 7) == 0 || strncmp(t, "arm64", 5) == 0) {
        bits = feat && has_feature(feat, "-neon") ? 0 : 128;
        /* SDOT / USDOT on 128 bits (the features, else the CPU's name) */
        int sdot = (has_feature(feat, "+dotprod") || listed(a64_dotprod, cpu) || listed(a64_i8mm, cpu)) &&
                   !has_feature(feat, "-dotprod");
        int usdot = sdot && (has_feature(feat, "+i8mm") || listed(a64_i8mm, cpu)) && !has_feature(feat, "-i8mm");
        *dot = sdot && bits ? 128 : 0;
        x->mixed = *dot && usdot;
    } else if (strncmp(t, "arm", 3) == 0 || strncmp(t, "thumb", 5) == 0) {
        bits = feat && has_feature(feat, "+neon") ? 128 : 0;    /* Cortex-M: none */
    }
    free(feat);
    free(triple);
    free(host);
    *simd = bits;
}

int cg_internal_error(CgCtx *c, const char *what, char *llvm_msg)
{
    util_error(c->d, util_loc_file(NULL), "internal error: %s in '%s': %s", what, c->p->name,
               llvm_msg ? llvm_msg : "");
    LLVMDisposeMessage(llvm_msg);
    return -1;
}

int cg_fail(CgCtx *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return util_error(c->d, util_loc_file(NULL), "code generation for '%s': %s", c->p->name, msg);
}

void cg_add_fn_attr(CgCtx *c, LLVMValueRef fn, const char *name, uint64_t val)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->ctx, kind, val));
}

LLVMValueRef cg_private_const(CgCtx *c, LLVMValueRef init, const char *name, unsigned align)
{
    LLVMValueRef g = LLVMAddGlobal(c->mod, LLVMTypeOf(init), name);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetAlignment(g, align);
    return g;
}

void cg_forward(CgCtx *c, const char *name, int n_params, const char *callee, LLVMValueRef first)
{
    LLVMTypeRef params[8];
    for (int i = 0; i <= n_params && i < 8; i++)
        params[i] = c->t_ptr;
    LLVMTypeRef callee_t = LLVMFunctionType(c->t_i32, params, (unsigned)n_params + 1, 0);
    LLVMValueRef target = LLVMGetNamedFunction(c->mod, callee);
    if (!target)
        target = LLVMAddFunction(c->mod, callee, callee_t);
    LLVMValueRef fn = LLVMAddFunction(c->mod, name, LLVMFunctionType(c->t_i32, params, (unsigned)n_params, 0));
    cg_add_fn_attr(c, fn, "nounwind", 0);
    LLVMPositionBuilderAtEnd(c->b, LLVMAppendBasicBlockInContext(c->ctx, fn, "entry"));
    LLVMValueRef args[8] = { first };
    for (int i = 0; i < n_params && i < 7; i++)
        args[i + 1] = LLVMGetParam(fn, (unsigned)i);
    LLVMValueRef r = LLVMBuildCall2(c->b, callee_t, target, args, (unsigned)n_params + 1, "");
    LLVMSetTailCall(r, 1);
    LLVMBuildRet(c->b, r);
}

/* Hosted triples (an OS component other than none/unknown) get PIC; bare
 * metal (thumbv7em-none-eabihf, riscv32-unknown-elf) gets static. */
static LLVMRelocMode reloc_for(const char *triple)
{
    const char *s = triple;
    for (int i = 0; i < 2 && s; i++) {
        s = strchr(s, '-');
        if (s)
            s++;
    }
    if (!s || strncmp(s, "none", 4) == 0 || strncmp(s, "unknown", 7) == 0)
        return LLVMRelocStatic;
    return LLVMRelocPIC;
}

int cg_ctx_init(CgCtx *c, const LoopProgram *p, const CgOptions *o, LLVMContextRef ext_ctx, int jit,
                UtilDiag *d)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    c->d = d;
    if (o)
        c->o = *o;
    else
        c->o.opt_level = 2;
    if (c->o.opt_level < 0 || c->o.opt_level > 3)
        return cg_fail(c, "optimization level %d is not 0..3", c->o.opt_level);
    init_targets();

    char *host = cg_host_triple();
    if (c->o.triple && *c->o.triple)
        c->triple = take_message(LLVMNormalizeTargetTriple(c->o.triple));
    else
        c->triple = host ? strdup(host) : NULL;
    if (!host || !c->triple) {
        free(host);
        return cg_fail(c, "out of memory");
    }
    int is_host = strcmp(c->triple, host) == 0;
    free(host);
    if (jit && !is_host)
        return cg_fail(c, "the JIT runs on the host (%s is not the host's triple)", c->triple);

    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(c->triple, &target, &err) != 0) {
        char *m = take_message(err);
        cg_fail(c, "unknown target triple '%s': %s", c->o.triple ? c->o.triple : c->triple, m ? m : "");
        free(m);
        return -1;
    }
    /* Objects are portable by default: the host CPU's name and features are
     * used only by the JIT (code that runs here) or when asked for with
     * --mcpu native; otherwise "generic" for the triple. */
    int native = c->o.cpu && strcmp(c->o.cpu, "native") == 0;
    if (native && !is_host)
        return cg_fail(c, "--mcpu native needs the host's triple (%s is not)", c->triple);
    int host_cpu = (jit && !c->o.cpu) || native;
    c->cpu = host_cpu ? take_message(LLVMGetHostCPUName()) : strdup(c->o.cpu ? c->o.cpu : "generic");
    c->features = c->o.features ? strdup(c->o.features)
                  : host_cpu   ? take_message(LLVMGetHostCPUFeatures())
                               : strdup("");
    if (!c->cpu || !c->features)
        return cg_fail(c, "out of memory");
    static const LLVMCodeGenOptLevel levels[] = { LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                                   LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive };
    c->x86_simd = strncmp(c->triple, "x86_64", 6) == 0 ? cg_simd_bits(&c->o, jit) : 0;
    c->x86_dot_i8 = c->x86_simd ? cg_dot_i8_bits(&c->o, jit) : 0;
    c->x86_dot_bf16 = c->x86_simd ? cg_dot_bf16_bits(&c->o, jit) : 0;
    c->x86_dot_i16 = c->x86_simd ? cg_dot_i16_bits(&c->o, jit) : 0;
    c->x86_perm = c->x86_simd ? cg_byte_permute_bits(&c->o, jit) : 0;
    c->mask_bytes = cg_masked_bytes(&c->o, jit);
    if (strncmp(c->triple, "aarch64", 7) == 0 || strncmp(c->triple, "arm64", 5) == 0)
        c->a64_dot = !cg_dot_i8_bits(&c->o, jit) ? 0 : cg_dot_i8_mixed(&c->o, jit) ? 2 : 1;
    c->bare_metal = reloc_for(c->triple) == LLVMRelocStatic;
    c->tm = LLVMCreateTargetMachine(target, c->triple, c->cpu, c->features, levels[c->o.opt_level],
                                    reloc_for(c->triple), LLVMCodeModelDefault);
    if (!c->tm)
        return cg_fail(c, "LLVM cannot create a target machine for '%s' (cpu '%s')", c->triple, c->cpu);

    c->owns_ctx = ext_ctx == NULL;
    c->ctx = ext_ctx ? ext_ctx : LLVMContextCreate();
    c->mod = LLVMModuleCreateWithNameInContext(p->name, c->ctx);
    LLVMSetSourceFileName(c->mod, p->name, strlen(p->name));
    LLVMSetTarget(c->mod, c->triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(c->tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    LLVMSetDataLayout(c->mod, dl);
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);
    c->b = LLVMCreateBuilderInContext(c->ctx);
    c->ab = LLVMCreateBuilderInContext(c->ctx);
    c->pbo = LLVMCreatePassBuilderOptions();

    c->t_void = LLVMVoidTypeInContext(c->ctx);
    c->t_i1 = LLVMInt1TypeInContext(c->ctx);
    c->t_i8 = LLVMInt8TypeInContext(c->ctx);
    c->t_i16 = LLVMInt16TypeInContext(c->ctx);
    c->t_i32 = LLVMInt32TypeInContext(c->ctx);
    c->t_i64 = LLVMInt64TypeInContext(c->ctx);
    c->t_half = LLVMHalfTypeInContext(c->ctx);
    c->t_bf16 = LLVMBFloatTypeInContext(c->ctx);
    c->t_f32 = LLVMFloatTypeInContext(c->ctx);
    c->t_f64 = LLVMDoubleTypeInContext(c->ctx);
    c->t_ptr = LLVMPointerTypeInContext(c->ctx, 0);
    c->md_loop = LLVMGetMDKindIDInContext(c->ctx, "llvm.loop", 9);

    size_t nb = p->n_bufs > 0 ? (size_t)p->n_bufs : 1, nv = p->n_vars > 0 ? (size_t)p->n_vars : 1;
    c->bufptr = calloc(nb, sizeof *c->bufptr);
    c->globals = calloc(nb, sizeof *c->globals);
    c->var = calloc(nv, sizeof *c->var);
    c->var_mut = calloc(nv, 1);
    if (!c->bufptr || !c->globals || !c->var || !c->var_mut)
        return cg_fail(c, "out of memory");
    return 0;
}

void cg_ctx_dispose(CgCtx *c)
{
    if (c->pbo)
        LLVMDisposePassBuilderOptions(c->pbo);
    if (c->ab)
        LLVMDisposeBuilder(c->ab);
    if (c->b)
        LLVMDisposeBuilder(c->b);
    if (c->mod)
        LLVMDisposeModule(c->mod);
    if (c->ctx && c->owns_ctx)
        LLVMContextDispose(c->ctx);
    if (c->tm)
        LLVMDisposeTargetMachine(c->tm);
    free(c->triple);
    free(c->cpu);
    free(c->features);
    free(c->bufptr);
    free(c->globals);
    free(c->var);
    free(c->var_mut);
    memset(c, 0, sizeof *c);
}

/* Diagnostics of the optimization passes.  A loop the schedule marked
 * VECTORIZED whose body calls a scalar libm function (tanh, erf) keeps its
 * vectorizer hint and stays scalar: LLVM's "loop not vectorized" remarks and
 * warnings about it are expected and dropped; other warnings and errors are
 * printed as LLVM would, prefixed. */
static void optimize_diag(LLVMDiagnosticInfoRef di, void *ctx)
{
    (void)ctx;
    char *m = LLVMGetDiagInfoDescription(di);
    LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
    if (m && (sev == LLVMDSError || sev == LLVMDSWarning) && !strstr(m, "loop not vectorized"))
        fprintf(stderr, "dlcc: %s: LLVM: %s\n", sev == LLVMDSError ? "error" : "warning", m);
    LLVMDisposeMessage(m);
}

int cg_ctx_optimize(CgCtx *c)
{
    char *msg = NULL;
    if (LLVMVerifyModule(c->mod, LLVMReturnStatusAction, &msg) != 0)
        return cg_internal_error(c, "LLVM module verification failed", msg);
    LLVMDisposeMessage(msg);
    char pipeline[16];
    snprintf(pipeline, sizeof pipeline, "default<O%d>", c->o.opt_level);
    LLVMDiagnosticHandler old_handler = LLVMContextGetDiagnosticHandler(c->ctx);
    void *old_ctx = LLVMContextGetDiagnosticContext(c->ctx);
    LLVMContextSetDiagnosticHandler(c->ctx, optimize_diag, NULL);
    LLVMErrorRef e = LLVMRunPasses(c->mod, pipeline, c->tm, c->pbo);
    LLVMContextSetDiagnosticHandler(c->ctx, old_handler, old_ctx);
    if (e) {
        char *m = LLVMGetErrorMessage(e);
        util_error(c->d, util_loc_file(NULL), "internal error: LLVM optimization failed in '%s': %s", c->p->name,
                   m ? m : "");
        LLVMDisposeErrorMessage(m);
        return -1;
    }
    if (LLVMVerifyModule(c->mod, LLVMReturnStatusAction, &msg) != 0)
        return cg_internal_error(c, "LLVM module verification after optimization failed", msg);
    LLVMDisposeMessage(msg);
    return 0;
}

/* ---- stack sizes
 * LLVM's -stack-size-section is a command-line flag of its code generator
 * that the C API does not reach.  The function attribute "warn-stack-size"
 * does: with a limit of 0, code generation reports the frame size of every
 * function with a frame as a diagnostic ("stack frame size (N) exceeds
 * limit (0) in function 'F'"), which a context diagnostic handler collects.
 * Other diagnostics are printed as LLVM would. */
typedef struct StackSizes {
    int64_t sum;     /* bytes, all frames */
    int n;           /* functions defined in the module */
} StackSizes;

static void stack_diag(LLVMDiagnosticInfoRef di, void *ctx)
{
    StackSizes *st = ctx;
    char *m = LLVMGetDiagInfoDescription(di);
    const char *at = m ? strstr(m, "stack frame size (") : NULL;
    long long n;
    LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
    if (at && sscanf(at, "stack frame size (%lld)", &n) == 1 && n >= 0)
        st->sum += n;
    else if (m && (sev == LLVMDSError || sev == LLVMDSWarning))   /* remarks and notes: not enabled */
        fprintf(stderr, "dlcc: %s: LLVM: %s\n", sev == LLVMDSError ? "error" : "warning", m);
    LLVMDisposeMessage(m);
}

/* Worst-case stack of the entry points: the generated code has no recursion,
 * so no call chain holds a function twice and the sum of all frames bounds
 * every chain; plus, per function, a return address and alignment (16 bytes),
 * and CG_STACK_LIBCALL_BYTES for the library functions they call (libm,
 * soft-float helpers). */
static int64_t stack_bound(const StackSizes *st)
{
    return st->sum + 16 * (int64_t)st->n + CG_STACK_LIBCALL_BYTES;
}

/* Code generation may change the IR it runs on, so every output but the
 * last is made from a fresh clone of the optimized module (last: c->mod
 * itself, which may be changed). */
static int emit_module(CgCtx *c, LLVMModuleRef m, LLVMCodeGenFileType kind, UtilBuf *out, int64_t *stack)
{
    LLVMMemoryBufferRef mb = NULL;
    char *err = NULL;
    StackSizes st = { 0, 0 };
    LLVMDiagnosticHandler old_handler = LLVMContextGetDiagnosticHandler(c->ctx);
    void *old_ctx = LLVMContextGetDiagnosticContext(c->ctx);
    if (stack) {
        for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
            if (!LLVMIsDeclaration(f)) {
                LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                        LLVMCreateStringAttribute(c->ctx, "warn-stack-size", 15, "0", 1));
                st.n++;
            }
        LLVMContextSetDiagnosticHandler(c->ctx, stack_diag, &st);
    }
    int bad = LLVMTargetMachineEmitToMemoryBuffer(c->tm, m, kind, &err, &mb);
    if (stack) {
        LLVMContextSetDiagnosticHandler(c->ctx, old_handler, old_ctx);
        *stack = stack_bound(&st);
    }
    if (m != c->mod)
        LLVMDisposeModule(m);
    if (bad)
        return cg_internal_error(c, kind == LLVMObjectFile ? "object emission failed" : "assembly emission failed",
                                 err);
    LLVMDisposeMessage(err);
    util_buf_put(out, LLVMGetBufferStart(mb), LLVMGetBufferSize(mb));
    LLVMDisposeMemoryBuffer(mb);
    return out->oom ? cg_fail(c, "out of memory") : 0;
}

int cg_emit_file(CgCtx *c, LLVMCodeGenFileType kind, UtilBuf *out, int64_t *stack)
{
    return emit_module(c, LLVMCloneModule(c->mod), kind, out, stack);
}

/* NVPTX keeps each module's kernel annotations (kernel, maxntid) in a
 * process-wide cache keyed by module and function address, filled by the
 * optimization passes that read them and cleared only when its printer
 * finishes that module.  Printing a clone left the optimized module's entry
 * behind, and a later module allocated at the same addresses read it: a
 * kernel printed as .func, a wrong .maxntid.  So the module printed is the
 * one optimized, and it is printed once. */
int cg_emit_last(CgCtx *c, LLVMCodeGenFileType kind, UtilBuf *out)
{
    return emit_module(c, c->mod, kind, out, NULL);
}
