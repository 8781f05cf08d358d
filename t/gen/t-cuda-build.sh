#!/bin/sh
# t/gen/t-cuda-build.sh - what a build with CUDA must show without a GPU:
#   - the built library defines exactly the launchers the registry gives
#     each dtype (declared in the generated src/gen/cuda_launchers.h), and
#     has the kernel templates instantiated;
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
# every launcher the registry gives each dtype is declared once, in
# src/gen/cuda_launchers.h: TENDO__CU_<ABI>(tendo__cu_<kernel>_<dt>);
decls=$(mktemp)
sed -n 's/^TENDO__CU_[A-Z_]*(\(tendo__cu_[A-Za-z0-9_]*\));.*/\1/p' "$b/src/gen/cuda_launchers.h" > "$decls"
dtypes=$(sed -n 's/^#define TENDO_HAVE_\([A-Z0-9_]*\) 1$/\1/p' "$b/include/tendo/dtype.h" | tr 'A-Z' 'a-z')
n=0
for dt in $dtypes; do n=$((n + 3)); done
echo "1..$((n + 2))"
t=0
check() { # DESCRIPTION, then a command
    t=$((t + 1)); d=$1; shift
    if "$@" >/dev/null 2>&1; then echo "ok $t - $d"; else echo "not ok $t - $d"; fi
}
syms=$(mktemp)
nm "$lib" > "$syms" 2>/dev/null
defined=$(mktemp)
sed -n 's/^[0-9a-f]* T \(tendo__cu_[A-Za-z0-9_]*\)$/\1/p' "$syms" | sort -u > "$defined"
for dt in $dtypes; do
    mine=$(grep "_$dt\$" "$decls" | grep -c .)
    missing=$(grep "_$dt\$" "$decls" | sort | comm -23 - "$defined" | head -3 | tr '\n' ' ')
    check "$dt: the library defines all $mine of its launchers${missing:+ (missing: $missing)}" test -z "$missing"
    # of the dtype-independent ones (tendo__cu_copy, _fill, _index_walk, ...) none ends in a dtype's name
    stray=$(grep "_$dt\$" "$defined" | comm -23 - "$(sort "$decls" > "$decls.s" && echo "$decls.s")" | head -3 | tr '\n' ' ')
    check "$dt: and no launcher the registry does not give it${stray:+ ($stray)}" test -z "$stray"
    check "$dt: the elementwise kernel templates were instantiated for it" \
        sh -c "grep -q 'tendo__cu_eq_$dt\$' '$decls' && grep -q 'tendo_ew_' '$syms'"
done
rm -f "$decls" "$decls.s" "$defined"
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
# the build's own flags: a sanitizer build's library needs its runtime linked in;
# through libtool, which adds what a static-only build's library needs
check "and links against the CUDA-enabled libtendo and runs" \
    sh -c "cd '$b' && ./libtool --mode=link $CC ${TEST_CFLAGS:-} '$dir/plain.o' -o '$dir/plain' libtendo.la ${TEST_LDFLAGS:-} && '$dir/plain'"
rm -rf "$dir"
