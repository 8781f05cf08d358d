#!/bin/sh
# t/fuzz/build.sh [DIR] - builds the libFuzzer targets fuzz-npy,
# fuzz-safetensors, fuzz-dlpack, fuzz-cli, fuzz-tokenizer, fuzz-save and
# fuzz-examples into DIR (default: build-fuzz/ at the top of the source
# tree): the library, static and without CUDA, and the targets, all
# compiled by clang with ASan + UBSan (every UBSan report fatal).
# CC=clang-19 picks another clang.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$src/build-fuzz}
cc=${CC:-clang}
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
jobs=$(nproc 2>/dev/null || echo 2)

mkdir -p "$out"
cd "$out"
if [ ! -f Makefile ]; then
    [ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >/dev/null)
    "$src/configure" -q CC="$cc" CFLAGS="-g -O1 $san -fsanitize=fuzzer-no-link" LDFLAGS="$san" \
        --without-cuda --without-mpi --disable-openmp --disable-shared ${PYTHON:+PYTHON="$PYTHON"}
fi
make -j"$jobs" libtendo.la >/dev/null

cflags="-std=c11 -g -O1 $san -D_POSIX_C_SOURCE=200809L -I$out/include -I$src/include -I$out/src -I$src/src \
    $(sed -n 's/^JANSSON_CFLAGS = //p' Makefile)"
# the libraries configure found (BLAS, jansson, libm; MPI, PCRE2 and utf8proc, when a build has them)
libs="$out/.libs/libtendo.a $(sed -n 's/^\(LIBS\|JANSSON_LIBS\|LIBM\|MPI_LIBS\|TEXT_LIBS\) = //p' Makefile | tr '\n' ' ') -lpthread"
targets="npy safetensors dlpack cli tokenizer save examples"
for target in $targets; do
    extra=
    [ $target = cli ] && extra="$src/tools/tendo.c $src/tools/files.c $src/tools/inspect.c $src/tools/convert.c \
        $src/tools/tokenize.c"
    # the example programs, one translation unit each (they share static names)
    [ $target = examples ] && extra="$src/t/fuzz/fuzz-examples-generate.c $src/t/fuzz/fuzz-examples-embed.c \
        $src/t/fuzz/fuzz-child.c"
    # shellcheck disable=SC2086
    $cc $cflags -fsanitize=fuzzer "$src/t/fuzz/fuzz-$target.c" "$src/t/fuzz/fuzz-util.c" $extra $libs \
        -o "fuzz-$target"
done
echo "built$(for t in $targets; do printf ' %s' "$out/fuzz-$t"; done)"
