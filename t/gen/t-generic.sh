#!/bin/sh
# t/gen/t-generic.sh - the _Generic front refuses dtype mixes at compile time.
#
# For every pair of dtypes, a call of a generic macro that takes two tensors
# with different dtypes must fail to compile -- with no warning flags at all
# -- and the same call with matching dtypes must compile.  A first argument
# that is not a tensor must fail too.  Needs CC, top_srcdir, top_builddir
# (set by `make check`).
: "${CC:=cc}" "${top_srcdir:=.}" "${top_builddir:=.}"
inc="-I$top_builddir/include -I$top_srcdir/include"
# (the names, once each: dtype.h has several X-macro lists)
dtypes=$(sed -n 's/^ *X(\([a-z0-9_]*\), .*/\1/p' "$top_builddir/include/tendo/dtype.h" 2>/dev/null | awk '!seen[$0]++')
[ -n "$dtypes" ] || dtypes=$(sed -n 's/^ *X(\([a-z0-9_]*\), .*/\1/p' "$top_srcdir/include/tendo/dtype.h" | awk '!seen[$0]++')
n=$(echo $dtypes | wc -w)
total=$((n * n + n + 1 + 6 + 6 + 6))
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

# ops by kind (API.md, "Which ops apply to which kinds"): a call on a dtype
# whose kind the op does not apply to, or with an argument of the wrong
# dtype, must not compile; the calls that apply must, with their result types
must_fail() { # NAME SOURCE PATTERN: fails, with PATTERN in the messages
    i=$((i + 1))
    if compiles "$2"; then echo "not ok $i - $1 must not compile"
    elif grep -q "$3" "$tmp/err"; then echo "ok $i - $1 is a compile error"
    else echo "not ok $i - $1 failed for another reason"; sed 's/^/# /' "$tmp/err"; fi
}
must_compile() { # NAME SOURCE: compiles with no diagnostic at all (a result
    # of the wrong pointer type would be only a warning)
    i=$((i + 1))
    if compiles "$2" && [ ! -s "$tmp/err" ]; then echo "ok $i - $1 compiles"
    else echo "not ok $i - $1 compiles"; sed 's/^/# /' "$tmp/err"; fi
}
# an int dtype and a float one of this build (i64 is always built)
case " $(echo $dtypes) " in *" i32 "*) it=i32 ;; *) it=i64 ;; esac
case " $(echo $dtypes) " in *" f32 "*) ft=f32 ;; *) ft=f64 ;; esac
must_fail "tensor_exp($it)" \
    "tensor_$it *f(const tensor_$it *a) { return tensor_exp(a); }" "_Generic"
must_fail "tensor_where with an $ft cond" \
    "tensor_$ft *f(const tensor_$ft *c, const tensor_$ft *a, const tensor_$ft *b) { return tensor_where(c, a, b); }" tendo__dtype_mismatch
must_fail "tensor_masked_fill with an i64 mask" \
    "tensor_$ft *f(const tensor_$ft *a, const tensor_i64 *m) { return tensor_masked_fill(a, m, 0.0); }" tendo__dtype_mismatch
must_fail "tensor_eq($ft, $it)" \
    "tensor_bool *f(const tensor_$ft *a, const tensor_$it *b) { return tensor_eq(a, b); }" tendo__dtype_mismatch
must_compile "tensor_where(bool cond, $it, $it) -> tensor_$it *" \
    "tensor_$it *f(const tensor_bool *c, const tensor_$it *a, const tensor_$it *b) { return tensor_where(c, a, b); }"
must_compile "tensor_sum($it) -> tensor_i64 *" \
    "tensor_i64 *f(const tensor_$it *a) { tensor_i64 *s = tensor_sum(a, 0, false); return s; }"
# indexing and joining (issue 12): index_select picks its form by the
# index's dtype; cat/stack dispatch on ts[0] and take a mutable array too
must_compile "tensor_index_select($ft, i64 index) and gather/scatter" \
    "tensor_$ft *f(const tensor_$ft *a, tensor_$ft *o, const tensor_i64 *i) { (void)tensor_scatter_out(o, 0, i, a); (void)tensor_copy_into(o, a); tensor_free(tensor_gather(a, 0, i)); return tensor_index_select(a, -1, i); }"
case " $(echo $dtypes) " in
*" i32 "*) must_compile "tensor_index_select($ft, i32 index) -> tensor_$ft *" \
    "tensor_$ft *f(const tensor_$ft *a, tensor_i32 *i) { return tensor_index_select(a, 0, i); }" ;;
*) must_compile "tensor_index_select($ft, i64 index) (no i32 in this build)" \
    "tensor_$ft *f(const tensor_$ft *a, tensor_i64 *i) { return tensor_index_select(a, 0, i); }" ;;
esac
# (with overloads the macro picks the function by the index's dtype, and
# finds none; with none, the index is checked as the i64 it must be)
must_fail "tensor_index_select with a $ft index" \
    "tensor_$ft *f(const tensor_$ft *a, const tensor_$ft *i) { return tensor_index_select(a, 0, i); }" \
    "_Generic\|tendo__dtype_mismatch"
must_compile "tensor_cat/tensor_stack of tensor_$it *[] and const arrays" \
    "tensor_$it *f(tensor_$it **ts, const tensor_$it *const *cs) { tensor_free(tensor_stack(cs, 2, 0)); tensor_free(tensor_tril(ts[0], -1)); return tensor_cat(ts, 2, 0); }"
must_fail "tensor_cat of an int array" \
    "void *f(int **ts) { return tensor_cat(ts, 2, 0); }" "_Generic"
must_fail "tensor_copy_into($ft, $it)" \
    "tendo_status f(tensor_$ft *a, const tensor_$it *b) { return tensor_copy_into(a, b); }" tendo__dtype_mismatch
# ordering, scans and statistics (issue 12): sort's output pointers are
# dtype-checked too (values of a's dtype, indices i64, or NULL)
must_compile "tensor_sort($ft) into $ft values and i64 indices, or NULL" \
    "tendo_status f(const tensor_$ft *a, tensor_$ft **v, tensor_i64 **i) { return tensor_sort(a, 0, false, v, i) + tensor_topk(a, 1, -1, true, NULL, i) + tensor_sort(a, 0, true, v, NULL); }"
must_fail "tensor_sort($ft) into $it values" \
    "tendo_status f(const tensor_$ft *a, tensor_$it **v, tensor_i64 **i) { return tensor_sort(a, 0, false, v, i); }" tendo__dtype_mismatch
must_fail "tensor_topk($ft) into $ft indices" \
    "tendo_status f(const tensor_$ft *a, tensor_$ft **v, tensor_$ft **i) { return tensor_topk(a, 2, 0, true, v, i); }" tendo__dtype_mismatch
must_compile "tensor_cumsum($it) -> tensor_i64 *, tensor_var($ft) -> tensor_$ft *" \
    "tensor_i64 *f(const tensor_$it *a, const tensor_$ft *b) { tensor_$ft *v = tensor_var(b, 0, 1, false); tensor_free(v); return tensor_cumsum(a, 0); }"
must_fail "tensor_var($it)" \
    "tensor_$it *f(const tensor_$it *a) { return tensor_var(a, 0, 1, false); }" "_Generic"
must_fail "tensor_sort(bool)" \
    "tendo_status f(const tensor_bool *a, tensor_bool **v) { return tensor_sort(a, 0, false, v, NULL); }" "_Generic"
