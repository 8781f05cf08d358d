#!/bin/sh
# bench/gpu-pack.sh BUILD_DIR - packs what a lent GPU machine needs for
# bench/gpu-run.sh into .gpu/bundle.tar.xz at the top of the source tree:
# the GPU tests, the CPU kernels' tests that gpu-run.sh runs at every
# TENDO_CPU level of that machine's CPU (AMX on the H200 machines), the
# examples, the tendo program and bench-gpu, built here
# in BUILD_DIR (configure --with-cuda-arch=sm_90 --without-mpi
# --without-nccl: one architecture, no MPI or NCCL to carry), and the
# shared libraries they need beyond glibc and CUDA's own (which the
# machine has).  The test programs hold libtendo each; xz with a large
# dictionary stores it about once.  Keep .gpu/ out of git
# (echo /.gpu/ >> .git/info/exclude) and carry it: device run carry [".gpu"].
set -eu
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
progs="t/t-cuda t/t-coverage t/t-grad t/t-attention t/t-matmul t/t-index t/t-order t/t-optim t/t-dlpack t/t-threads t/t-gemm t/t-nn
examples/tendo-embed examples/tendo-generate tools/tendo bench/bench-gpu"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# `make` first: the generated sources the tests include come with all, not
# with a lone program target (BUILT_SOURCES)
(cd "$build" && make -j"$(nproc)" >/dev/null && make -j"$(nproc)" $progs >/dev/null)
mkdir -p "$stage/t" "$stage/examples" "$stage/tools" "$stage/bench" "$stage/lib" "$top/.gpu"
# the programs themselves: a program linked with the shared libtendo is a
# libtool wrapper script, its binary in .libs/ (libtendo.so goes in lib/)
for p in $progs; do
    real="$build/$(dirname "$p")/.libs/$(basename "$p")"
    [ -f "$real" ] || real="$build/$p"
    cp "$real" "$stage/$p"
done
cp -L "$build/.libs/libtendo.so.0" "$stage/lib/"
echo "$(git -C "$top" rev-parse --short HEAD)" >"$top/.gpu/commit"
# the libraries outside glibc, the C++ runtime and CUDA
for p in $progs; do LD_LIBRARY_PATH="$build/.libs" ldd "$stage/$p"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcudart|libcublas|libcublasLt|libtendo)\.so' |
    while read -r lib; do cp -L "$lib" "$stage/lib/"; done
tar -C "$stage" -cf - . | xz -9e --lzma2=dict=192MiB -T1 >"$top/.gpu/bundle.tar.xz"
ls -la "$top/.gpu/bundle.tar.xz"
