#!/bin/sh
# t/gen/t-gen-docs.sh - the published coverage matrix, docs/ops.md, is what the
# registry and the dtype table give: the generator writes it into the build
# tree, and it must equal the copy in the source tree (an in-tree build
# rewrites that copy, which is then to be committed).  Needs top_srcdir and
# top_builddir (make check exports them).
: "${top_srcdir:=.}" "${top_builddir:=.}"
echo "1..1"
src=$top_srcdir/docs/ops.md built=$top_builddir/docs/ops.md
if [ ! -f "$built" ]; then
    echo "ok 1 # SKIP no docs/ops.md generated in this build (a release tarball's sources are not regenerated)"
elif cmp -s "$src" "$built"; then
    echo "ok 1 - docs/ops.md is what gen/registry/ and gen/dtypes.toml give"
else
    echo "not ok 1 - docs/ops.md is what gen/registry/ and gen/dtypes.toml give: copy $built over it"
    diff "$src" "$built" | head -20 | sed 's/^/# /'
fi
