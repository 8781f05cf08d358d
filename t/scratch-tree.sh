# t/scratch-tree.sh - sourced by the tests that build a modified copy of
# the source tree (t-gen-ops.sh, t-gen-dtype.sh).
#
# scratch_tree SRC TMP: copies to SRC the sources a build needs from
# $top_srcdir, by name (so that no object, library, test program or
# generated file of a tree configured in place comes along), with their
# times (so that configure and Makefile.in stay up to date); TMP is a
# scratch directory for the file list.  Nonzero on failure.
scratch_tree() {
    (cd "$top_srcdir" &&
        find configure configure.ac Makefile.am Makefile.in aclocal.m4 config.h.in tendo.pc.in build-aux \
            -type f -print &&
        find gen include kernels m4 src t templates tools bench \( -name .deps -o -name .libs -o -path src/gen \) \
            -prune -o -type f \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' -o -name '*.j2' -o -name '*.toml' \
            -o -name '*.sh' -o -name '*.py' -o -name '*.m4' -o -name tendo-gen \) -print) >"$2/files" || return 1
    while IFS= read -r f; do
        mkdir -p "$1/$(dirname "$f")" && cp -p "$top_srcdir/$f" "$1/$f" || return 1
    done <"$2/files"
    # the generator's outputs, should the tree have them, are made afresh
    rm -f "$1/include/tendo.h" "$1/include/tendo/dtype.h" "$1"/include/tendo/tensor_*.h \
        "$1/t/each-dtype.h" "$1/t/ops-table.h" "$1/t/fault-table.h"
}
