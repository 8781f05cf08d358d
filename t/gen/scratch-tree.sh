# t/gen/scratch-tree.sh - sourced by the tests that build a modified copy of
# the source tree (t-gen-ops.sh, t-gen-dtype.sh), after they set PYTHON and
# top_srcdir.
#
# Skips the whole test (TAP "1..0 # SKIP") without Python 3.11 and jinja2,
# or with TENDO_SCRATCH=0 (every CI step but distcheck, which runs them
# once, from the release tarball);
# otherwise makes $tmp (removed on exit), copies to $src=$tmp/src the
# sources a build needs, by name (so that no object, library, test program
# or generated file of a tree configured in place comes along) and with
# their times (so that configure and Makefile.in stay up to date), and sets
# $build=$tmp/build (not made), $make and $jobs for a make of the test's
# own, not a sub-make of the one running the tests.
if [ "${TENDO_SCRATCH:-1}" = 0 ]; then
    echo "1..0 # SKIP TENDO_SCRATCH=0: no scratch-tree builds in this run"
    exit 0
fi
if ! "$PYTHON" -c 'import sys, tomllib, jinja2; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "1..0 # SKIP no Python 3.11+ with jinja2 (a release tarball needs none)"
    exit 0
fi
case "$top_srcdir" in /*) ;; *) top_srcdir=$(pwd)/$top_srcdir ;; esac
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src build=$tmp/build
unset MAKEFLAGS MFLAGS MAKELEVEL
make=${MAKE:-make}
jobs=$(nproc 2>/dev/null || echo 2)

(cd "$top_srcdir" &&
    find configure configure.ac Makefile.am Makefile.in aclocal.m4 config.h.in tendo.pc.in build-aux \
        -type f -print &&
    find gen include kernels m4 src t templates tools bench \( -name .deps -o -name .libs -o -path src/gen \) \
        -prune -o -type f \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' -o -name '*.j2' -o -name '*.toml' \
        -o -name '*.sh' -o -name '*.py' -o -name '*.m4' -o -name tendo-gen \) -print) >"$tmp/files" || exit 1
while IFS= read -r f; do
    mkdir -p "$src/$(dirname "$f")" && cp -p "$top_srcdir/$f" "$src/$f" || exit 1
done <"$tmp/files"
# the generator's outputs, should the tree have them, are made afresh
rm -f "$src/include/tendo.h" "$src/include/tendo/dtype.h" "$src"/include/tendo/tensor_*.h \
    "$src/t/each-dtype.h" "$src/t/ops-table.h" "$src/t/fault-table.h"
