#!/bin/sh
# t/t-layers.sh - the source tree keeps its layers (README, "How it is built").
#
#   src/core/   includes nothing of src/cpu, src/io, src/cuda or src/gen: it
#               reaches them only through the device and dtype tables
#   src/cpu/    includes nothing of src/io or src/cuda
#   src/io/     includes nothing of src/cpu or src/cuda
#   CUDA's own headers are included only in src/cuda/ and kernels/
#
# Reads the sources; needs top_srcdir (make check).
: "${top_srcdir:=.}"
cd "$top_srcdir" || exit 1
echo "1..4"

# N DESCRIPTION FILES... with the include pattern in $bad
check() {
    n=$1 what=$2
    shift 2
    hits=$(grep -nE "$bad" "$@" 2>/dev/null)
    if [ -z "$hits" ]; then
        echo "ok $n - $what"
    else
        echo "not ok $n - $what"
        echo "$hits" | sed 's/^/# /'
    fi
}

bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*"(cpu|io|cuda|gen)/'
check 1 "src/core includes no cpu/, io/, cuda/ or gen/ header" src/core/*.[ch]
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*"(io|cuda)/'
check 2 "src/cpu includes no io/ or cuda/ header" src/cpu/*.[ch]
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*"(cpu|cuda)/'
check 3 "src/io includes no cpu/ or cuda/ header" src/io/*.[ch]
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*<(cuda|cublas|cuda_runtime|cuda_runtime_api|cuda_fp16|cuda_bf16|library_types|driver_types)[a-z_0-9]*\.h>'
check 4 "CUDA headers only in src/cuda/ and kernels/" src/core/*.[ch] src/cpu/*.[ch] src/io/*.[ch] \
    include/tendo/*.h templates/*.j2 tools/*.[ch]
