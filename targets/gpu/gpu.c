/* targets/gpu/gpu.c — the GPU target (docs/targets/gpu.md): the loop
 * pipeline with the GPU schedule, then PTX through LLVM's NVPTX backend and
 * a host object launching it through the dlcc runtime (or, with
 * --gpu-emulate, the same kernels built for the host), the header and the
 * report. */
#include "targets/gpu/gpu_impl.h"
#include "codegen/codegen.h"
#include "lower/lower.h"
#include "runtime/dlcc_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libdevice.10.bc: $DLCC_LIBDEVICE, the CUDA toolkit's, Debian's. */
static const char *find_libdevice(void)
{
    static const char *const paths[] = { "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc",
                                         "/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc", NULL };
    const char *env = getenv("DLCC_LIBDEVICE");
    if (env && *env)
        return env;
    for (int i = 0; paths[i]; i++)
        if (access(paths[i], R_OK) == 0)
            return paths[i];
    return NULL;
}

/* What NAME.h says of a GPU object: its workspace is the device state,
 * which NAME_release frees; a run may fail on the device and be retried;
 * what the runtime shares between workspaces (docs/targets/gpu.md). */
static const char gpu_workspace_note[] =
    "/* The workspace holds the device state (loaded kernels, device buffers), set up by\n"
    " * the first run and freed by the _release function below; fresh or zeroed memory.\n"
    " * After an error a later run retries.  Link with `pkg-config --libs dlcc-runtime`. */\n";
static const char gpu_reentrant[] =
    "one workspace per thread.\n"
    " * This object has no writable globals; the runtime shares per process the CUDA driver\n"
    " * library and one CUDA context, Halide's, with its locks (docs/targets/gpu.md).";

/* The GPU schedule: blocks, threads, shared-memory tiles; under
 * --gpu-emulate the thread loops split at barriers for the host. */
static int gpu_schedule(LoopProgram *p, const IrGraph *g, const void *arg, UtilDiag *d)
{
    (void)g;
    const TgtOptions *o = arg;
    TgtGpuOptions gs = { .block_size = 256, .tile = 16, .coop_threads = 512, .shared_bytes = 48 << 10 };
    return tgt_gpu_schedule(p, &gs, d) || (o->gpu_emulate && tgt_gpu_split_barriers(p, d)) ? -1 : 0;
}

LoopProgram *tgt_gpu_program(const IrGraph *g, const TgtOptions *o, UtilDiag *d)
{
    LowSchedule sched = { .target = "gpu", .rnn_tasks = 1 };   /* plain loop nests: the GPU schedule binds them */
    TgtPipeline pl = { .name = o->name, .lowering = &sched, .schedule = gpu_schedule, .arg = o,
                       .schedule_name = "the GPU schedule", .plan_memory = 1, .reuse = o->opt_level > 0 };
    return tgt_loop_program(g, &pl, d);                      /* device workspace offsets */
}

int tgt_gpu_compile(const IrGraph *g, const TgtOptions *o, TgtFiles *out, UtilDiag *d)
{
    CgGpuOptions gpo = { .arch = o->gpu_arch, .libdevice = find_libdevice(), .host_triple = o->triple,
                         .opt_level = o->opt_level, .emit = o->emit & TGT_EMIT_LLVM ? CG_EMIT_LLVM : 0 };
    CgOptions emo = { .triple = o->triple, .cpu = o->cpu, .features = o->features, .opt_level = o->opt_level,
                      .gpu_emulate = 1, .emit = CG_EMIT_OBJ | (o->emit & TGT_EMIT_ASM ? CG_EMIT_ASM : 0) |
                                                (o->emit & TGT_EMIT_LLVM ? CG_EMIT_LLVM : 0) };
    CgGpuResult gr;
    CgResult er;
    cg_gpu_result_init(&gr);
    cg_result_init(&er);
    int rc = -1;

    LoopProgram *p = tgt_gpu_program(g, o, d);
    if (!p)
        goto done;
    int64_t ws;
    if (o->gpu_emulate) {
        if (cg_compile(p, &emo, &er, d))                     /* the same kernels, serial, for the host */
            goto done;
        ws = p->workspace_bytes;
    } else {
        if (cg_compile_gpu(p, &gpo, &gr, d))                 /* PTX + host object */
            goto done;
        ws = DLCC_GPU_WORKSPACE_BYTES(gr.n_device_bufs);
    }

    int bad = 0;
    if (o->emit & TGT_EMIT_OBJ)
        bad |= tgt_add_file(out, o->name, ".o", o->gpu_emulate ? &er.obj : &gr.obj, d);
    if (!bad && (o->emit & TGT_EMIT_PTX) && !o->gpu_emulate)
        bad |= tgt_add_file(out, o->name, ".ptx", &gr.ptx, d);
    if (!bad && (o->emit & TGT_EMIT_ASM) && o->gpu_emulate)
        bad |= tgt_add_file(out, o->name, ".s", &er.asm_text, d);
    if (!bad && (o->emit & TGT_EMIT_LLVM))
        bad |= tgt_add_file(out, o->name, ".ll", o->gpu_emulate ? &er.llvm_ir : &gr.llvm_ir, d);
    TgtHeader h = TGT_HEADER_CPU(er.stack_bytes);            /* emulated: a host object like the CPU's */
    if (!o->gpu_emulate)
        h = (TgtHeader){ .stack_bytes = -1, .workspace_bytes = ws, .codes = 1u << -DLCC_ERR_DEVICE | 1u << -DLCC_ERR_PROGRAM,
                         .note = gpu_workspace_note, .reentrant = gpu_reentrant, .release = 1 };
    if (bad || tgt_add_common_files(g, p, o, o->gpu_emulate ? "gpu-emulate" : "gpu", &h, out, d))
        goto done;
    out->workspace_bytes = ws;
    rc = 0;
done:
    if (rc)
        tgt_files_free(out);
    cg_gpu_result_free(&gr);
    cg_result_free(&er);
    if (p)
        loop_program_free(p);
    return rc;
}
