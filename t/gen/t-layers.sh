#!/bin/sh
# t/gen/t-layers.sh - the source tree keeps its layers (README, "How it is built").
#
#   src/core/   includes nothing of src/cpu, src/io, kernels/ or src/gen: it
#               reaches them only through the device and dtype tables
#   src/cpu/    includes nothing of src/io or kernels/
#   src/io/     includes nothing of src/cpu or kernels/
#   src/comm/   includes nothing of src/cpu, src/io or kernels/ (CUDA
#               tensors' collectives go through the device table)
#   src/text/   (tokenizers) includes nothing of src/cpu, src/comm, src/gen or
#               kernels/: text, not tensors (it shares src/io's JSON set-up)
#   CUDA's own headers are included only in kernels/ (the CUDA backend)
#
# Reads the sources; needs top_srcdir (make check).
: "${top_srcdir:=.}"
cd "$top_srcdir" || exit 1
echo "1..6"

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

# kernels/'s headers: its *.cuh, host/ and sim/
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*"((cpu|io|host|sim|gen)/|[a-z_]*\.cuh")'
check 1 "src/core includes no cpu/, io/, gen/ or kernels/ header" src/core/*.[ch]
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*"((io|host|sim)/|[a-z_]*\.cuh")'
check 2 "src/cpu includes no io/ or kernels/ header" src/cpu/*.[ch]
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*"((cpu|host|sim)/|[a-z_]*\.cuh")'
check 3 "src/io includes no cpu/ or kernels/ header" src/io/*.[ch]
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*<(cuda|cublas|cuda_runtime|cuda_runtime_api|cuda_fp16|cuda_bf16|library_types|driver_types)[a-z_0-9]*\.h>'
check 4 "CUDA headers only in kernels/" src/core/*.[ch] src/cpu/*.[ch] src/io/*.[ch] src/comm/*.[ch] \
    src/text/*.[ch] include/tendo/*.h templates/*/*.j2 templates/*/*/*.j2 tools/*.[ch]
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*"((cpu|io|host|sim)/|[a-z_]*\.cuh")'
check 5 "src/comm includes no cpu/, io/ or kernels/ header" src/comm/*.[ch]
bad='^[[:space:]]*#[[:space:]]*include[[:space:]]*"((cpu|comm|gen|host|sim)/|[a-z_]*\.cuh")'
check 6 "src/text includes no cpu/, comm/, gen/ or kernels/ header" src/text/*.[ch]
