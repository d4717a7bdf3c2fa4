// runtime/gpu_halide_gen.cpp — build-time tool: writes Halide's standalone
// runtime object for x86-64 Linux with the CUDA device interface (all weak
// symbols): the CUDA context and the lookup of the driver for
// runtime/gpu_runtime.c, the thread pool for --threads objects.  Run by Meson
// so that the dlcc process itself links only one LLVM (docs/targets/gpu.md).
//
//     dlcc-gpu-halide-gen OUT.o [TARGET]     (TARGET defaults to x86-64-linux-cuda)
#include <Halide.h>

#include <cstdio>
#include <exception>

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: %s OUT.o [HALIDE_TARGET]\n", argv[0]);
        return 2;
    }
    try {
        Halide::compile_standalone_runtime(argv[1], Halide::Target(argc > 2 ? argv[2] : "x86-64-linux-cuda"));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
