/* dlcc/runtime.h — the part of dlcc's runtime an application using
 * generated models includes (installed as <dlcc/runtime.h>; CMake target
 * dlcc::runtime, pkg-config dlcc-runtime).  Prefix: DLCC_.
 *
 * Single-threaded CPU objects need nothing from here to link (docs/generated-code.md);
 * these macros help an application that runs several models share one
 * workspace buffer:
 *
 *     #include <dlcc/runtime.h>
 *     #include "kws.h"
 *     #include "vww.h"
 *     DLCC_WORKSPACE(ws, DLCC_MAX(kws_WORKSPACE_SIZE, vww_WORKSPACE_SIZE));
 *     ...
 *     kws_run(&kin, &kout, ws);   // one model at a time on the same buffer
 *     vww_run(&vin, &vout, ws);
 */
#ifndef DLCC_RUNTIME_H
#define DLCC_RUNTIME_H

#define DLCC_RUNTIME_VERSION "@VERSION@"

/* The larger of two sizes (an integer constant expression). */
#define DLCC_MAX(a, b) ((a) > (b) ? (a) : (b))

/* DLCC_WORKSPACE_ALIGN: every generated model wants its workspace aligned
 * to it (NAME_WORKSPACE_ALIGN); the return codes of NAME_run. */
#include "dlcc_abi.h"

/* A static workspace of `size` bytes (size may be 0) named `name`. */
#if defined(__cplusplus)
#define DLCC_WORKSPACE(name, size) alignas(DLCC_WORKSPACE_ALIGN) static unsigned char name[(size) > 0 ? (size) : 1]
#else
#define DLCC_WORKSPACE(name, size) \
    static _Alignas(DLCC_WORKSPACE_ALIGN) unsigned char name[(size) > 0 ? (size) : 1]
#endif

#endif
