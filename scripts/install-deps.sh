#!/usr/bin/env bash
# Installs everything dlcc needs to build and test on Debian 12, from Debian's
# packages.  Idempotent; needs root (or sudo).  clang (14 on Debian 12) and
# libclang-rt-14-dev (its libFuzzer and sanitizer runtimes) build the fuzzing
# harnesses of tests/fuzz/ only; the main build uses the default C compiler.
# libstarpu-dev (StarPU 1.3, with libstarpumpi-1.3-3) is the heterogeneous
# runtime (-t hetero, docs/targets/hetero.md); openmpi-bin and libopenmpi-dev
# (mpirun, mpicc, mpi.h) its StarPU-MPI part and the 2-rank tests.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS=(
  build-essential meson ninja-build pkg-config
  libjansson-dev libcmocka-dev libglpk-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev
  llvm-19-dev libhalide14-0-dev g++
  libstarpu-dev openmpi-bin libopenmpi-dev
  clang libclang-rt-14-dev
  python3 python3-numpy python3-venv
  cmake
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
  qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
