#!/bin/sh
# bench/gpu-run.sh - what a lent GPU machine runs, in one device call, from
# the source tree's root with .gpu/ carried (bench/gpu-pack.sh made it):
#   device run command "sh bench/gpu-run.sh" carry [".gpu"] timeout_s 540
# Unpacks the prebuilt programs, runs the GPU part of the suite (every TAP
# program that runs on cuda:0 when there is one, and the examples on
# cuda:0 against the CPU), the CPU kernels' tests at each TENDO_CPU level
# of the machine's CPU, then `make bench-gpu`'s two halves (tendo's
# bench-gpu and bench/gpu.py under the machine's PyTorch).  Writes
# $OUT/tests.log, $OUT/bench.txt, $OUT/ratios.txt (tendo / PyTorch per
# case, bench/gpu-ratios.awk) and $OUT/summary.txt (the machine, each
# program's pass/fail counts and time); copy summary.txt, ratios.txt and
# bench.txt to bench/results/ with the GPU model, the date and the commit.
set -u
out=${OUT:-/tmp/gpu-out}
src=$(pwd)
g=/tmp/tendo-gpu
mkdir -p "$out" "$g"
tar -xJf .gpu/bundle.tar.xz -C "$g" || exit 1
# CUDA's runtime and cuBLAS: the toolkit's, else PyTorch's wheels
libs=$g/lib
for d in /usr/local/cuda/lib64 $(python3 -c 'import nvidia, os; p = nvidia.__path__[0]; print(" ".join(os.path.join(p, s, "lib") for s in os.listdir(p)))' 2>/dev/null); do
    [ -d "$d" ] && libs=$libs:$d
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export top_srcdir=$src top_builddir=$g TENDO_SCRATCH=0
{
    echo "commit: $(cat .gpu/commit 2>/dev/null || echo unknown)"
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    "$g/tools/tendo" info | grep -E '^(tendo|build|cpu kernels)|cuda:'
} >"$out/summary.txt" 2>&1
run() { # NAME CMD...: one TAP program into tests.log, its counts into summary.txt
    name=$1
    shift
    start=$(date +%s)
    "$@" >"$out/one.log" 2>&1
    rc=$?
    cat "$out/one.log" >>"$out/tests.log"
    printf '%-34s exit %3d  ok %6d  not ok %4d  skip %4d  %4ds\n' "$name" "$rc" \
        "$(grep -c '^ok' "$out/one.log")" "$(grep -c '^not ok' "$out/one.log")" \
        "$(grep -c '# SKIP' "$out/one.log")" $(($(date +%s) - start)) >>"$out/summary.txt"
    grep '^not ok' "$out/one.log" | head -20 >>"$out/summary.txt"
}
: >"$out/tests.log"
for t in t-cuda t-coverage t-grad t-attention t-matmul t-index t-order t-optim t-dlpack t-threads; do
    run "$t" "$g/t/$t"
done
run t-examples-device.sh env BENCH_PYTHON=python3 sh "$src/t/drivers/t-examples-device.sh"
# the CPU kernels at every level this machine's CPU has (native: AMX tiles
# where it has them, which no CI machine does)
for level in native avx512bf16 avx512 avx2 portable; do
    for t in t-gemm t-matmul t-nn t-attention; do
        run "$t TENDO_CPU=$level" env TENDO_CPU=$level "$g/t/$t"
    done
done
rm -f "$out/one.log"
{
    echo "== tendo"
    "$g/bench/bench-gpu"
    echo "== PyTorch"
    python3 "$src/bench/gpu.py"
} >"$out/bench.txt" 2>&1
awk -f "$src/bench/gpu-ratios.awk" "$out/bench.txt" >"$out/ratios.txt"
cat "$out/summary.txt" "$out/ratios.txt"
