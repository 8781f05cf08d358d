#!/bin/sh
# t/t-generic.sh - the _Generic front refuses dtype mixes at compile time.
#
# For every pair of dtypes, a call of a generic macro that takes two tensors
# with different dtypes must fail to compile -- with no warning flags at all
# -- and the same call with matching dtypes must compile.  A first argument
# that is not a tensor must fail too.  Needs CC, top_srcdir, top_builddir
# (set by `make check`).
: "${CC:=cc}" "${top_srcdir:=.}" "${top_builddir:=.}"
inc="-I$top_builddir/include -I$top_srcdir/include"
dtypes=$(sed -n 's/^ *X(\([a-z0-9_]*\), .*/\1/p' "$top_builddir/include/tendo/dtype.h" 2>/dev/null)
[ -n "$dtypes" ] || dtypes=$(sed -n 's/^ *X(\([a-z0-9_]*\), .*/\1/p' "$top_srcdir/include/tendo/dtype.h")
n=$(echo $dtypes | wc -w)
total=$((n * n + n + 1))
echo "1..$total"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
i=0

# compiles SOURCE: returns the compiler's status, its messages in $tmp/err
compiles() {
    printf '%s\n' "#include <tendo.h>" "$1" > "$tmp/x.c"
    # no -W flags and no -Werror: a mix must be a hard error on its own
    $CC -std=c11 $inc -c "$tmp/x.c" -o "$tmp/x.o" 2> "$tmp/err"
}

for a in $dtypes; do
    for b in $dtypes; do
        i=$((i + 1))
        src="bool f(const tensor_$a *x, tensor_$b *y) { return tensor_shares_storage(x, y); }"
        if [ "$a" = "$b" ]; then
            if compiles "$src"; then echo "ok $i - shares_storage($a, $b) compiles"
            else echo "not ok $i - shares_storage($a, $b) compiles"; sed 's/^/# /' "$tmp/err"; fi
        else
            if compiles "$src"; then echo "not ok $i - shares_storage($a, $b) must not compile"
            elif grep -q "tendo__dtype_mismatch" "$tmp/err"; then echo "ok $i - shares_storage($a, $b) is a compile error naming the mismatch"
            else echo "not ok $i - shares_storage($a, $b) failed for another reason"; sed 's/^/# /' "$tmp/err"; fi
        fi
    done
done

# every generic macro with one tensor, per dtype, compiles and picks its dtype
for a in $dtypes; do
    i=$((i + 1))
    src="tensor_$a *f(tensor_$a *t) {
    int64_t n = tensor_numel(t) + tensor_size(t, 0) + tensor_offset(t) + tensor_ndim(t);
    const int64_t *s = tensor_shape(t), *st = tensor_stride(t);
    (void)n; (void)s; (void)st; (void)tensor_device(t); (void)tensor_is_contiguous(t);
    (void)tensor_copy_to(t, tensor_data(t), 0); (void)tensor_print(t, stdout);
    tensor_$a *v = tensor_transpose(tensor_reshape(t, 1, s), 0, 0);
    tensor_free(v);
    return tensor_contiguous(t);
}"
    if compiles "$src"; then echo "ok $i - generic calls on tensor_$a compile"
    else echo "not ok $i - generic calls on tensor_$a compile"; sed 's/^/# /' "$tmp/err"; fi
done

i=$((i + 1))
if compiles "int f(int *p) { return tensor_ndim(p); }"; then echo "not ok $i - tensor_ndim(int *) must not compile"
else echo "ok $i - tensor_ndim(int *) is a compile error"; fi
