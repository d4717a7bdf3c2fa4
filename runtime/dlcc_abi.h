/* dlcc_abi.h — the contract between the code dlcc generates and the code
 * around it, the same on every target (installed as <dlcc/dlcc_abi.h>).
 * Prefix: DLCC_.
 *
 * Every model compiled with `dlcc MODEL -o OUT --name NAME` exports
 *
 *   int32_t NAME_run(const NAME_inputs *in, NAME_outputs *out, void *workspace);
 *   int32_t NAME_run_ptrs(const void *const inputs[], void *const outputs[], void *workspace);
 *
 * declared in NAME.h, which restates what follows for the model as NAME_OK,
 * NAME_ERR_* and NAME_WORKSPACE_ALIGN.  The code generators (codegen/), the
 * header writer (targets/header.c) and the runtime library (runtime/) take
 * these values from here and nowhere else. */
#ifndef DLCC_ABI_H
#define DLCC_ABI_H

/* The return codes of NAME_run / NAME_run_ptrs: 0, or one of the negative
 * codes.  X(NAME, value, what it means): NAME.h defines NAME_<NAME> for the
 * codes its target's entry points can return, with that comment. */
#define DLCC_RETURN_CODES(X) \
    X(OK, 0, "success") \
    X(ERR_NULL, -1, "a required pointer was NULL") \
    X(ERR_DEVICE, -2, "a device or its runtime failed: no CUDA driver or device, a CUDA call, StarPU") \
    X(ERR_PROGRAM, -3, "the model's program descriptor does not match the runtime's version") \
    X(ERR_QUEUE, -4, "submit: as many inputs as may be in flight are; wait: none is in flight")

enum {
#define DLCC_RETURN_CODE(name, value, doc) DLCC_##name = value,
    DLCC_RETURN_CODES(DLCC_RETURN_CODE)
#undef DLCC_RETURN_CODE
};

/* The alignment in bytes the workspace passed to NAME_run must have
 * (NAME_WORKSPACE_ALIGN); weights and intermediate buffers are aligned to it
 * inside the object and the workspace. */
#define DLCC_WORKSPACE_ALIGN 64

#endif
