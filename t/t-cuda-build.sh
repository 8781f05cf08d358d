#!/bin/sh
# t/t-cuda-build.sh - what a build with CUDA must show without a GPU:
#   - the built library holds the kernels and launchers of every dtype;
#   - a plain C11 program including <tendo.h> compiles with $CC alone (no
#     CUDA headers: the public headers have no CUDA types), links against
#     the CUDA-enabled libtendo and runs (CUDA unavailable is not an error).
# Skips in a build without CUDA.
set -u
b=${top_builddir:-.}
lib=$b/.libs/libtendo.a
CC=${CC:-cc}
# config.h says what this configuration built (a build directory may keep
# CUDA objects from an earlier configuration)
if ! grep -q '^#define TENDO_HAVE_CUDA 1' "$b/config.h" 2>/dev/null; then
    echo "1..0 # SKIP built without CUDA"
    exit 0
fi
dtypes=$(cd "$b/src/gen" && ls ops_*.c | sed 's/^ops_//; s/\.c$//')
n=0
for dt in $dtypes; do n=$((n + 5)); done
echo "1..$((n + 2))"
t=0
check() { # DESCRIPTION, then a command
    t=$((t + 1)); d=$1; shift
    if "$@" >/dev/null 2>&1; then echo "ok $t - $d"; else echo "not ok $t - $d"; fi
}
syms=$(mktemp)
nm "$lib" > "$syms" 2>/dev/null
# which launchers a dtype has depends on its kind (templates/cuda_launchers.h.j2):
# exp, rand, softmax and norms for the floats only, argmax/argmin for all
# but bool; every dtype has add or bitwise_and, eq, sum, where and conversions
kind_of() {
    case $1 in
    bool) echo bool ;;
    f* | bf*) echo float ;;
    u*) echo uint ;;
    *) echo int ;;
    esac
}
for dt in $dtypes; do
    k=$(kind_of "$dt")
    if [ "$k" = float ]; then
        check "$dt: elementwise launchers (tendo__cu_add_$dt, tendo__cu_exp_$dt, tendo__cu_eq_$dt, tendo__cu_where_$dt)" \
            sh -c "grep -q ' T tendo__cu_add_$dt\$' $syms && grep -q ' T tendo__cu_exp_$dt\$' $syms && grep -q ' T tendo__cu_eq_$dt\$' $syms && grep -q ' T tendo__cu_where_$dt\$' $syms"
        check "$dt: reduction, argmax, softmax and norm launchers" \
            sh -c "grep -q ' T tendo__cu_rows_sum_$dt\$' $syms && grep -q ' T tendo__cu_rows_arg_$dt\$' $syms && grep -q ' T tendo__cu_rows_softmax_$dt\$' $syms && grep -q ' T tendo__cu_rows_norm_$dt\$' $syms"
        check "$dt: rand and conversion launchers" \
            sh -c "grep -q ' T tendo__cu_rand_$dt\$' $syms && grep -q ' T tendo__cu_to_f32_$dt\$' $syms && grep -q ' T tendo__cu_to_i64_$dt\$' $syms"
        check "$dt: device code of its kernels (k_rand_$dt)" sh -c "grep -q 'k_rand_$dt' $syms"
    else
        [ "$k" = bool ] && first=bitwise_and || first=add
        check "$dt: elementwise launchers (tendo__cu_${first}_$dt, tendo__cu_eq_$dt, tendo__cu_where_$dt; no exp)" \
            sh -c "grep -q ' T tendo__cu_${first}_$dt\$' $syms && grep -q ' T tendo__cu_eq_$dt\$' $syms && grep -q ' T tendo__cu_where_$dt\$' $syms && ! grep -q ' T tendo__cu_exp_$dt\$' $syms"
        if [ "$k" = bool ]; then
            check "$dt: reduction launchers (sum, any; no argmax, softmax, norm)" \
                sh -c "grep -q ' T tendo__cu_rows_sum_$dt\$' $syms && grep -q ' T tendo__cu_rows_any_$dt\$' $syms && ! grep -q ' T tendo__cu_rows_arg_$dt\$' $syms && ! grep -q ' T tendo__cu_rows_softmax_$dt\$' $syms"
        else
            check "$dt: reduction and argmax launchers (sum, max, arg; no softmax, norm)" \
                sh -c "grep -q ' T tendo__cu_rows_sum_$dt\$' $syms && grep -q ' T tendo__cu_rows_max_$dt\$' $syms && grep -q ' T tendo__cu_rows_arg_$dt\$' $syms && ! grep -q ' T tendo__cu_rows_softmax_$dt\$' $syms && ! grep -q ' T tendo__cu_rows_norm_$dt\$' $syms"
        fi
        check "$dt: conversion launchers, and no rand" \
            sh -c "grep -q ' T tendo__cu_to_f32_$dt\$' $syms && grep -q ' T tendo__cu_to_bool_$dt\$' $syms && ! grep -q ' T tendo__cu_rand_$dt\$' $syms"
        check "$dt: device code of its reduction kernels" sh -c "grep -q 'tendo_reduce_warp' $syms"
    fi
    check "$dt: the elementwise kernel templates were instantiated" sh -c "grep -q 'tendo_ew_dense' $syms"
done
rm -f "$syms"
dir=$(mktemp -d)
cat > "$dir/plain.c" <<'C'
#include <tendo.h>
int main(void)
{
    tensor_f32 *a = tensor_f32_arange(0, 6, 1, tendo_cpu());
    tensor_f32 *b = tendo_cuda_available() ? tensor_to(a, tendo_cuda(0)) : tensor_clone(a);
    tensor_f32 *c = b ? tensor_add(b, b) : NULL;
    float out[6];
    int ok = c && tensor_copy_to(c, out, 6) == TENDO_OK && out[5] == 10.0f;
    tensor_free(a), tensor_free(b), tensor_free(c);
    return ok ? 0 : 1;
}
C
check "a plain C11 program compiles against <tendo.h> with $CC alone (no CUDA headers)" \
    $CC -std=c11 -Wall -Wextra -Werror -I"$b/include" -I"${top_srcdir:-.}/include" -c "$dir/plain.c" -o "$dir/plain.o"
# the build's own flags: a sanitizer build's library needs its runtime linked in
check "and links against the CUDA-enabled libtendo.so and runs" \
    sh -c "$CC ${TEST_CFLAGS:-} '$dir/plain.o' -o '$dir/plain' ${TEST_LDFLAGS:-} -L'$b/.libs' -Wl,-rpath,'$(cd "$b/.libs" && pwd)' -ltendo && '$dir/plain'"
rm -rf "$dir"
