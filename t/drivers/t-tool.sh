#!/bin/sh
# t/drivers/t-tool.sh - the `tendo` program: info, help, inspect and convert, their
# output and their exit codes (0 ok, 1 bad input file, 2 bad usage).
#
# The fixtures are written byte by byte with printf (a .npy and a
# safetensors file), so everything but the cross-checks runs without
# Python; with a Python that has numpy (and safetensors, ml_dtypes) the
# JSON is parsed, statistics of random data are checked against numpy's
# and converted files are loaded by the safetensors package.
#
# TENDO_TOOL_WRAP runs every `tendo` under a wrapper, e.g.
#   TENDO_TOOL_WRAP="./libtool --mode=execute valgrind -q --error-exitcode=99
#   --leak-check=full --errors-for-leak-kinds=all" make check TESTS=t/drivers/t-tool.sh
# shellcheck disable=SC2059 # printf formats that are the fixtures' bytes
: "${top_builddir:=.}"
tendo="$top_builddir/tools/tendo"
# the fixtures and conversions are f16, bf16 and i32 ones: a build may
# leave those out (--enable-dtypes), and then this program's file handling
# is left to the builds that have them
for d in F16 BF16 I32; do
    if ! grep -q "^#define TENDO_HAVE_$d 1" "$top_builddir/include/tendo/dtype.h" 2>/dev/null; then
        echo "1..0 # SKIP this build has no $(echo $d | tr A-Z a-z), which the fixtures and conversions use"
        exit 0
    fi
done
tmp=$(mktemp -d) || exit 1
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1))
    echo "not ok $n - $1"
    echo "# exit status $rc; stdout:"; sed 's/^/#   /' "$tmp/out" | head -20
    echo "# stderr:"; sed 's/^/#   /' "$tmp/err" | head -20
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
# check DESCRIPTION COMMAND...: ok when COMMAND succeeds
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
# t ARGS...: runs tendo ARGS, stdout in $tmp/out, stderr in $tmp/err, status in $rc
t() { $TENDO_TOOL_WRAP "$tendo" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
has() { grep -q -- "$1" "$2"; }
# usage_error DESCRIPTION ARGS...: exit 2 with a message and a pointer to help
usage_error() {
    d=$1; shift; t "$@"
    check "usage error, exit 2: $d" [ "$rc" -eq 2 -a ! -s "$tmp/out" -a -s "$tmp/err" ]
}
# the row of tensor NAME ("-" for .npy) in the table in $tmp/out
row() { awk -v name="$1" '$1 == name { $1 = $1; print; exit }' "$tmp/out"; }

# ---- fixtures, byte by byte ------------------------------------------------
# f32 little-endian: 0 1 2 3 4 5, and 1 nan inf -inf; f16: 0.5 1.5 -2
f32_0to5='\000\000\000\000\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100\000\000\240\100'
f32_odd='\000\000\200\077\000\000\300\177\000\000\200\177\000\000\200\377'
f16_3='\000\070\000\076\000\300'
# a.npy: f32 [2, 3] = arange(6); the header (118 bytes) pads the data to offset 128
hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
pad=$((128 - 10 - ${#hdr} - 1))
{ printf '\223NUMPY\001\000\166\000%s%*s\n' "$hdr" "$pad" ""; printf "$f32_0to5"; } >"$tmp/a.npy"
# m.safetensors: x f32 [2, 3] arange(6); y f32 [4] 1 nan inf -inf; z f16 [3]
json='{"__metadata__":{"format":"pt","note":"tab\there"},"x":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},'
json=$json'"y":{"dtype":"F32","shape":[4],"data_offsets":[24,40]},"z":{"dtype":"F16","shape":[3],"data_offsets":[40,46]}}'
while [ $((${#json} % 8)) -ne 0 ]; do json="$json "; done
{ printf "\\$(printf %03o ${#json})\\000\\000\\000\\000\\000\\000\\000"; printf '%s' "$json"
  printf "$f32_0to5$f32_odd$f16_3"; } >"$tmp/m.safetensors"

# ---- info and help ---------------------------------------------------------
t info
check "info runs" [ "$rc" -eq 0 ]
check "info names the version, dtypes, BLAS, threads and devices" has "^tendo [0-9]" "$tmp/out"
check "info lists f32, f16 and bf16 with their sizes" \
    sh -c "grep -q '^  f32 *4 bytes' '$tmp/out' && grep -q '^  bf16 *2 bytes' '$tmp/out' && grep -q '^blas:' '$tmp/out' && grep -q '^openmp:.*thread' '$tmp/out'"
if grep -q '^  cuda:0' "$tmp/out"; then ncuda=1; else ncuda=0; fi
if [ $ncuda -eq 0 ]; then check "info says when there is no CUDA device" has "no CUDA devices available" "$tmp/out"
else ok "info lists the CUDA devices"; fi
check "info says what the CPU kernels use" has "^cpu kernels: [a-z0-9 ]" "$tmp/out"
export TENDO_CPU=portable; t info; unset TENDO_CPU
check "TENDO_CPU=portable: info says the kernels run portable C" has "^cpu kernels: portable (TENDO_CPU=portable)" "$tmp/out"

for args in "--help" "-h" "help" "help info" "help inspect" "help convert" "help demo" \
    "info --help" "inspect --help" "convert --help" "demo -h" "inspect a --help"; do
    # shellcheck disable=SC2086
    t $args
    check "tendo $args: exit 0, usage on stdout" sh -c "[ $rc -eq 0 ] && head -n 1 '$tmp/out' | grep -q '^usage: tendo'"
done
t --version
check "--version" [ "$rc" -eq 0 -a -s "$tmp/out" ]
t help inspect
check "inspect's help says the statistics skip NaN and Inf" has "finite elements only" "$tmp/out"

usage_error "no command"
usage_error "unknown command" frobnicate
usage_error "unknown option" --frobnicate
usage_error "help for an unknown command" help frobnicate
usage_error "info with an argument" info extra
usage_error "inspect without a FILE" inspect
usage_error "inspect --json without a FILE" inspect --json
usage_error "inspect, unknown option" inspect --bogus "$tmp/a.npy"
usage_error "convert without --dtype" convert "$tmp/a.npy" "$tmp/b.npy"
usage_error "convert, --dtype without a value" convert "$tmp/a.npy" "$tmp/b.npy" --dtype
usage_error "convert, a dtype this build lacks" convert --dtype f128 "$tmp/a.npy" "$tmp/b.npy"
check "the message names the dtypes of this build" has "f32, f16, bf16" "$tmp/err"
usage_error "convert, not a dtype" convert --dtype=banana "$tmp/a.npy" "$tmp/b.npy"
usage_error "convert without OUT" convert --dtype bf16 "$tmp/a.npy"
usage_error "convert with three files" convert --dtype bf16 "$tmp/a.npy" "$tmp/b.npy" "$tmp/c.npy"
usage_error "convert, unknown option" convert --dtype bf16 --fast "$tmp/a.npy" "$tmp/b.npy"
usage_error "convert, a device that is not one" convert --dtype bf16 --device gpu0 "$tmp/a.npy" "$tmp/b.npy"
usage_error "convert .npy to a .safetensors name" convert --dtype f16 "$tmp/a.npy" "$tmp/b.safetensors"
check "no OUT after a usage error" [ ! -e "$tmp/b.npy" -a ! -e "$tmp/b.safetensors" ]

# ---- inspect ---------------------------------------------------------------
t inspect "$tmp/a.npy"
check "inspect a.npy" [ "$rc" -eq 0 -a ! -s "$tmp/err" ]
check "a.npy: file line" has "a.npy: npy, 1 tensor, 152 bytes" "$tmp/out"
check "a.npy: header row" sh -c "grep -q '^ *name  *dtype  *shape  *bytes  *min  *max  *mean  *std  *nan  *inf$' '$tmp/out'"
r=$(row -)
check "a.npy: arange(6) as f32 [2, 3]: min 0 max 5 mean 2.5 std 1.70783 [$r]" \
    [ "$r" = "- f32 [2, 3] 24 0 5 2.5 1.70783 0 0" ]

t inspect "$tmp/m.safetensors"
check "inspect m.safetensors" [ "$rc" -eq 0 -a ! -s "$tmp/err" ]
check "m.safetensors: file line" has "m.safetensors: safetensors, 3 tensors" "$tmp/out"
check "m.safetensors: metadata" sh -c "grep -q '^  metadata format = pt$' '$tmp/out'"
r=$(row x)
check "x: arange(6) [$r]" [ "$r" = "x f32 [2, 3] 24 0 5 2.5 1.70783 0 0" ]
r=$(row y)
check "y: NaN and Inf counted apart, the finite 1 summarized [$r]" [ "$r" = "y f32 [4] 16 1 1 1 0 1 2" ]
r=$(row z)
check "z: f16 0.5 1.5 -2 [$r]" [ "$r" = "z f16 [3] 6 -2 1.5 0 1.47196 0 0" ]
check "tensors in file order" sh -c "awk '\$1 ~ /^[xyz]\$/ { s = s \$1 } END { exit s != \"xyz\" }' '$tmp/out'"

t inspect --no-stats "$tmp/m.safetensors" "$tmp/a.npy"
r=$(row z)
check "--no-stats: name dtype shape bytes only [$r]" [ "$rc" -eq 0 -a "$r" = "z f16 [3] 6" ]
check "--no-stats: no statistics columns" sh -c "! grep -q ' mean ' '$tmp/out'"
check "two files: both listed" sh -c "grep -q 'a.npy: npy' '$tmp/out' && grep -q 'm.safetensors: safetensors' '$tmp/out'"

t inspect --json "$tmp/m.safetensors" "$tmp/a.npy"
cp "$tmp/out" "$tmp/m.json"
check "--json: exit 0" [ "$rc" -eq 0 -a ! -s "$tmp/err" ]
check "--json: an array of files" sh -c "head -n 1 '$tmp/out' | grep -q '^\\[' && tail -n 1 '$tmp/out' | grep -q '^\\]'"
check "--json: a tensor object" \
    has '{"name": "x", "dtype": "f32", "shape": \[2, 3\], "bytes": 24, "min": 0, "max": 5, "mean": 2.5, "std": 1.707825127659933' "$tmp/out"
check "--json: null for no finite value, counts as numbers" has '"name": "y", .*"nan": 1, "inf": 2' "$tmp/out"
check "--json: metadata, escaped" has '"metadata": {"format": "pt", "note": "tab\\there"}' "$tmp/out"
check "--json: a .npy array has no name" has '"name": null, "dtype": "f32"' "$tmp/out"

odd="$tmp/$(printf 'odd\377"name')"
cp "$tmp/a.npy" "$odd"
t inspect --json --no-stats "$odd"
check "--json: a file name that is not UTF-8 becomes valid JSON" has '"file": ".*odd\\ufffd\\"name"' "$tmp/out"
rm -f "$odd"

# ---- bad files: exit 1, the file name and the reason on stderr --------------
bad_file() { # DESCRIPTION FILE [OTHER ARGS]
    d=$1; f=$2; shift 2; t inspect "$f" "$@"
    check "inspect $d: exit 1, 'tendo inspect: FILE: reason'" \
        sh -c "[ $rc -eq 1 ] && grep -q '^tendo inspect: $f: .' '$tmp/err'"
}
bad_file "a missing file" "$tmp/missing.npy"
check "missing: the reason" has "No such file" "$tmp/err"
bad_file "a directory" "$tmp"
check "directory: the reason" has "is a directory" "$tmp/err"
printf 'hello, world\n' >"$tmp/text.safetensors"
bad_file "a text file" "$tmp/text.safetensors"
: >"$tmp/empty"
bad_file "an empty file" "$tmp/empty"
head -c 140 "$tmp/a.npy" >"$tmp/short.npy"
bad_file "a truncated .npy" "$tmp/short.npy"
head -c 180 "$tmp/m.safetensors" >"$tmp/short.safetensors"
bad_file "a truncated safetensors file" "$tmp/short.safetensors"
{ printf '\377\377\377\377\377\377\377\177'; printf '{}'; } >"$tmp/huge-header"
bad_file "a safetensors header length past the end" "$tmp/huge-header"
sed 's/"F16"/"Q99"/' "$tmp/m.safetensors" >"$tmp/dtype.safetensors"
bad_file "a safetensors dtype tendo lacks" "$tmp/dtype.safetensors"
# a name with a terminal escape sequence reaches stderr escaped, as in the table
json2='{"\u001b[2Jwiped":{"dtype":"Q99","shape":[1],"data_offsets":[0,4]}}'
while [ $((${#json2} % 8)) -ne 0 ]; do json2="$json2 "; done
{ printf "\\$(printf %03o ${#json2})\\000\\000\\000\\000\\000\\000\\000"; printf '%s' "$json2"
  printf '\000\000\000\000'; } >"$tmp/escape.safetensors"
bad_file "a tensor name with an escape sequence" "$tmp/escape.safetensors"
check "escape sequence: escaped on stderr" has '\\x1b\[2Jwiped' "$tmp/err"
check "escape sequence: no raw ESC on stderr" sh -c "tr -d '\\033' <'$tmp/err' | cmp -s - '$tmp/err'"
cp "$tmp/a.npy" "$tmp/locked.npy"; chmod 000 "$tmp/locked.npy"
if [ -r "$tmp/locked.npy" ]; then skip "an unreadable file (running as root)"
else bad_file "an unreadable file" "$tmp/locked.npy"; fi
t inspect "$tmp/a.npy" "$tmp/missing.npy" "$tmp/m.safetensors"
check "a bad file among good ones: exit 1, the good ones listed" \
    sh -c "[ $rc -eq 1 ] && grep -q 'a.npy: npy' '$tmp/out' && grep -q 'm.safetensors: safe' '$tmp/out' && grep -q missing.npy '$tmp/err'"
t inspect --json "$tmp/a.npy" "$tmp/missing.npy"
check "--json with a bad file: exit 1, an error object for it" \
    sh -c "[ $rc -eq 1 ] && grep -q '{\"file\": \".*missing.npy\", \"error\": \"No such file' '$tmp/out'"

# ---- convert ---------------------------------------------------------------
t convert --dtype bf16 "$tmp/m.safetensors" "$tmp/m-bf16.safetensors"
check "convert safetensors f32 -> bf16" [ "$rc" -eq 0 -a ! -s "$tmp/out" -a ! -s "$tmp/err" ]
t inspect "$tmp/m-bf16.safetensors"
check "bf16: x [$(row x)]" [ "$(row x)" = "x bf16 [2, 3] 12 0 5 2.5 1.70783 0 0" ]
check "bf16: y keeps NaN and both Infs [$(row y)]" [ "$(row y)" = "y bf16 [4] 8 1 1 1 0 1 2" ]
check "bf16: z from f16 too [$(row z)]" [ "$(row z)" = "z bf16 [3] 6 -2 1.5 0 1.47196 0 0" ]
check "bf16: the metadata kept" sh -c "grep -q '^  metadata format = pt$' '$tmp/out'"

t convert --dtype=F16 "$tmp/m.safetensors" "$tmp/m-f16.safetensors"
check "convert safetensors f32 -> f16 (safetensors spelling F16)" [ "$rc" -eq 0 ]
t inspect "$tmp/m-f16.safetensors"
check "f16: x [$(row x)]" [ "$(row x)" = "x f16 [2, 3] 12 0 5 2.5 1.70783 0 0" ]
check "f16: z unchanged [$(row z)]" [ "$(row z)" = "z f16 [3] 6 -2 1.5 0 1.47196 0 0" ]
t convert "$tmp/m-f16.safetensors" "$tmp/m-f32.safetensors" --dtype float32
t inspect "$tmp/m-f32.safetensors"
check "back to f32 (numpy spelling float32, options last) [$(row x)]" [ "$rc" -eq 0 -a "$(row x)" = "x f32 [2, 3] 24 0 5 2.5 1.70783 0 0" ]

# --from: which tensors convert (float by default; all, or one dtype)
t convert --dtype i32 "$tmp/m.safetensors" "$tmp/m-i32.safetensors"
t inspect "$tmp/m-i32.safetensors"
check "to i32: x [$(row x)]" [ "$rc" -eq 0 -a "$(row x)" = "x i32 [2, 3] 24 0 5 2.5 1.70783 0 0" ]
check "to i32: y saturates, NaN gives 0 (mean 0) [$(row y)]" \
    [ "$(row y)" = "y i32 [4] 16 -2.14748e+09 2.14748e+09 0 1.5185e+09 0 0" ]
check "to i32: z (from f16) truncates [$(row z)]" [ "$(row z)" = "z i32 [3] 12 -2 1 -0.333333 1.24722 0 0" ]
t convert --dtype f32 --from i32 "$tmp/m-i32.safetensors" "$tmp/m-back.safetensors"
t inspect "$tmp/m-back.safetensors"
check "--from i32 back to f32: y [$(row y)]" \
    [ "$rc" -eq 0 -a "$(row y)" = "y f32 [4] 16 -2.14748e+09 2.14748e+09 0.25 1.5185e+09 0 0" ]
t convert --dtype bool --from float "$tmp/m.safetensors" "$tmp/m-bool.safetensors"
t inspect "$tmp/m-bool.safetensors"
check "--from float to bool: x, 0 is false [$(row x)]" [ "$rc" -eq 0 -a "$(row x)" = "x bool [2, 3] 6 0 1 0.833333 0.372678 0 0" ]
check "--from float to bool: y, NaN is true [$(row y)]" [ "$(row y)" = "y bool [4] 4 1 1 1 0 0 0" ]
t convert --dtype f16 --from i64 "$tmp/m.safetensors" "$tmp/m-none.safetensors"
t inspect "$tmp/m-none.safetensors"
check "--from i64 with no i64 tensor: nothing changes [$(row x)]" [ "$rc" -eq 0 -a "$(row x | cut -d' ' -f1-2)" = "x f32" ]
usage_error "convert, --from that names nothing" convert --dtype f16 --from ints "$tmp/a.npy" "$tmp/b.npy"

t convert --dtype f16 "$tmp/a.npy" "$tmp/a-f16.npy"
check "convert .npy f32 -> f16" [ "$rc" -eq 0 ]
t inspect "$tmp/a-f16.npy"
check "f16 .npy [$(row -)]" [ "$(row -)" = "- f16 [2, 3] 12 0 5 2.5 1.70783 0 0" ]
t convert --dtype bf16 "$tmp/a-f16.npy" "$tmp/a-bf16.npy"
check "convert .npy -> bf16: exit 1, numpy has no bf16" sh -c "[ $rc -eq 1 ] && grep -q '^tendo convert: .*a-bf16.npy: .*bf16' '$tmp/err'"
check "no a-bf16.npy, no temporary file left" sh -c "[ ! -e '$tmp/a-bf16.npy' ] && ! ls '$tmp' | grep -q tmp"
echo old >"$tmp/keep.npy"
t convert --dtype bf16 "$tmp/a.npy" "$tmp/keep.npy"
check "a failed convert leaves an existing OUT as it was" sh -c "[ $rc -eq 1 ] && [ \"\$(cat '$tmp/keep.npy')\" = old ]"
t convert --dtype bf16 "$tmp/missing.safetensors" "$tmp/n.safetensors"
check "convert a missing IN: exit 1, named, no OUT" \
    sh -c "[ $rc -eq 1 ] && grep -q '^tendo convert: .*missing.safetensors: ' '$tmp/err' && [ ! -e '$tmp/n.safetensors' ]"
t convert --dtype bf16 "$tmp/short.safetensors" "$tmp/n.safetensors"
check "convert a truncated IN: exit 1, named, no OUT" \
    sh -c "[ $rc -eq 1 ] && grep -q '^tendo convert: .*short.safetensors: ' '$tmp/err' && [ ! -e '$tmp/n.safetensors' ]"
t convert --dtype bf16 "$tmp/m.safetensors" "$tmp/no/such/dir/n.safetensors"
check "convert to a missing directory: exit 1, OUT named" sh -c "[ $rc -eq 1 ] && grep -q 'tendo convert: .*no/such/dir/n.safetensors: ' '$tmp/err'"
t convert --dtype bf16 --device cuda:0 "$tmp/m.safetensors" "$tmp/gpu.safetensors"
if [ $ncuda -eq 0 ]; then
    check "convert --device cuda:0 without CUDA: exit 1, the device error, no OUT" \
        sh -c "[ $rc -eq 1 ] && grep -q '^tendo convert: cuda:0: .' '$tmp/err' && [ ! -e '$tmp/gpu.safetensors' ]"
else
    check "convert --device cuda:0" [ "$rc" -eq 0 ]
fi
t convert --dtype bf16 --progress "$tmp/m.safetensors" "$tmp/p.safetensors"
check "--progress: a bar on stderr, ended by 100% ... done" sh -c "[ $rc -eq 0 ] && grep -q '100%.* done' '$tmp/err'"
t convert --dtype bf16 "$tmp/m.safetensors" "$tmp/q.safetensors"
check "without --progress and a terminal: nothing on stderr" [ "$rc" -eq 0 -a ! -s "$tmp/err" ]
check "the same file either way" cmp -s "$tmp/p.safetensors" "$tmp/q.safetensors"
# a tensor bigger than a progress step (4Mi elements) converts step by step
hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (4194307,), }"
pad=$((128 - 10 - ${#hdr} - 1))
{ printf '\223NUMPY\001\000\166\000%s%*s\n' "$hdr" "$pad" ""; head -c $((4 * 4194307)) /dev/zero; } >"$tmp/z.npy"
t convert --dtype f16 --progress "$tmp/z.npy" "$tmp/z1.npy"
rc1=$rc
t convert --dtype f16 "$tmp/z.npy" "$tmp/z2.npy"
check "a big tensor, with and without a progress bar: the same file" \
    sh -c "[ $rc1 -eq 0 ] && [ $rc -eq 0 ] && cmp -s '$tmp/z1.npy' '$tmp/z2.npy'"
t inspect "$tmp/z1.npy"
check "... of f16 zeros [$(row -)]" [ "$(row -)" = "- f16 [4194307] 8388614 0 0 0 0 0 0" ]
rm -f "$tmp/z.npy" "$tmp/z1.npy" "$tmp/z2.npy"
t convert --dtype bf16 "$tmp/m-bf16.safetensors" "$tmp/r.safetensors"
check "bf16 -> bf16 copies the file's tensors unchanged" sh -c "[ $rc -eq 0 ] && cmp -s '$tmp/m-bf16.safetensors' '$tmp/r.safetensors'"

# ---- with Python: cross-checks ---------------------------------------------
py=
for p in "${BENCH_PYTHON:-}" "${PYTHON:-}" python3; do
    [ -n "$p" ] && "$p" -c 'import numpy' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then
    for what in "--json parses" "statistics match numpy" "converted files load in the safetensors package"; do
        skip "$what: no Python with numpy"
    done
else
    if "$py" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d[0]["tensors"][2]["name"] == "z"; assert d[0]["tensors"][1]["min"] == 1 and d[1]["tensors"][0]["name"] is None; assert d[0]["metadata"]["note"] == "tab\there"' "$tmp/m.json" 2>"$tmp/err"
    then ok "--json parses with Python's json"; else rc=-; not_ok "--json parses with Python's json"; fi

    # random data in every dtype, chunked across threads, against numpy in double
    if "$py" -c 'import safetensors, ml_dtypes' 2>/dev/null; then
        "$py" - "$tmp" <<'PY' >"$tmp/py.out" 2>&1
import sys, numpy as np, ml_dtypes
from safetensors.numpy import save_file
d = sys.argv[1]
rng = np.random.default_rng(7)
a = (rng.standard_normal(300001) * 3 + 100).astype(np.float32)
a[[5, 70000, 200000]] = [np.nan, np.inf, -np.inf]
save_file({"a": a, "h": rng.standard_normal((517, 301)).astype(np.float16),
           "big": rng.standard_normal((3, 1500000), dtype=np.float32),  # > 4Mi elements
           "b": (rng.standard_normal(150000) * 1e3).astype(ml_dtypes.bfloat16)}, f"{d}/r.safetensors")
np.save(f"{d}/r.npy", a[:1000].reshape(10, 100).T)  # Fortran order
PY
        t inspect --json "$tmp/r.safetensors" "$tmp/r.npy"
        cp "$tmp/out" "$tmp/r.json"
        if [ "$rc" -eq 0 ] && "$py" - "$tmp" <<'PY' >"$tmp/err" 2>&1
import sys, json, numpy as np, ml_dtypes  # ml_dtypes: numpy learns bfloat16
from safetensors.numpy import load_file
d = sys.argv[1]
doc = json.load(open(f"{d}/r.json"))
arrays = dict(load_file(f"{d}/r.safetensors"))
arrays[None] = np.load(f"{d}/r.npy")
for f in doc:
    for t in f["tensors"]:
        x = arrays[t["name"]].astype(np.float64).ravel()
        fin = x[np.isfinite(x)]
        assert t["nan"] == np.isnan(x).sum() and t["inf"] == np.isinf(x).sum(), t
        assert t["min"] == fin.min() and t["max"] == fin.max(), t
        assert abs(t["mean"] - fin.mean()) <= 1e-12 * abs(fin).max(), (t, fin.mean())
        assert abs(t["std"] - fin.std()) <= 1e-10 * fin.std(), (t, fin.std())
PY
        then ok "statistics of random f32/f16/bf16 data match numpy's (float64, finite elements)"
        else not_ok "statistics of random f32/f16/bf16 data match numpy's"; fi

        t convert --dtype bf16 --progress "$tmp/r.safetensors" "$tmp/r-bf16.safetensors"
        rc1=$rc
        t convert --dtype f16 "$tmp/r.safetensors" "$tmp/r-f16.safetensors"
        if [ "$rc1" -eq 0 ] && [ "$rc" -eq 0 ] && "$py" - "$tmp" <<'PY' >"$tmp/err" 2>&1
import sys, numpy as np, ml_dtypes
from safetensors import safe_open
from safetensors.numpy import load_file
d = sys.argv[1]
src = load_file(f"{d}/r.safetensors")
for dt, path in ((ml_dtypes.bfloat16, "r-bf16"), (np.float16, "r-f16")):
    with safe_open(f"{d}/{path}.safetensors", framework="np") as f:
        assert sorted(f.keys()) == sorted(src), list(f.keys())
        for k in f.keys():
            got, want = f.get_tensor(k), src[k].astype(np.float32).astype(dt)
            assert got.dtype == np.dtype(dt) and got.shape == want.shape, (k, got.dtype, got.shape)
            same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32)))
            assert same.all(), (k, path, np.flatnonzero(~same)[:5])
PY
        then ok "converted bf16 and f16 files load in the safetensors package, rounded as ml_dtypes/numpy round"
        else not_ok "converted files load in the safetensors package"; fi
    else
        skip "statistics match numpy: no safetensors/ml_dtypes module"
        skip "converted files load in the safetensors package: no safetensors/ml_dtypes module"
    fi
fi

# ---- integers, bool, dtypes this build lacks ---------------------------------
# k.safetensors: i I64 [3] -1 2 7; b BOOL [4] 1 0 1 1; u U16 [2] (no tendo
# build has U16); d F64 [1] 0.5 (listed as not built where f64 is left out)
json='{"i":{"dtype":"I64","shape":[3],"data_offsets":[0,24]},"b":{"dtype":"BOOL","shape":[4],"data_offsets":[32,36]},'
json=$json'"u":{"dtype":"U16","shape":[2],"data_offsets":[36,40]},"d":{"dtype":"F64","shape":[1],"data_offsets":[24,32]}}'
while [ $((${#json} % 8)) -ne 0 ]; do json="$json "; done
{ printf "\\$(printf %03o $((${#json} % 256)))\\$(printf %03o $((${#json} / 256)))\\000\\000\\000\\000\\000\\000"
  printf '%s' "$json"
  printf '\377\377\377\377\377\377\377\377\002\000\000\000\000\000\000\000\007\000\000\000\000\000\000\000'
  printf '\000\000\000\000\000\000\340\077\001\000\001\001\001\000\002\000'; } >"$tmp/k.safetensors"
t inspect "$tmp/k.safetensors"
check "inspect a file with a dtype this build lacks: exit 0, listed [$(cat "$tmp/err")]" [ "$rc" -eq 0 -a ! -s "$tmp/err" ]
check "i64 statistics exact: min -1 max 7 mean 2.66667 std 3.29983 [$(row i)]" \
    [ "$(row i)" = "i i64 [3] 24 -1 7 2.66667 3.29983 0 0" ]
check "bool statistics: min 0 max 1 mean 0.75 std 0.433013 [$(row b)]" \
    [ "$(row b)" = "b bool [4] 4 0 1 0.75 0.433013 0 0" ]
check "U16 listed as '(not built)' with its shape [$(row u)]" [ "$(row u)" = "u U16 (not built) [2] - - - - - - -" ]
if "$tendo" info | grep -q '^  f64 '; then want="d f64 [1] 8 0.5 0.5 0.5 0 0 0"; else want="d F64 (not built) [1] - - - - - - -"; fi
check "F64: '$want' in this build [$(row d)]" [ "$(row d)" = "$want" ]
t inspect --json "$tmp/k.safetensors"
check "--json: the absent tensor, dtype '... (not built)', null bytes and statistics" \
    has '{"name": "u", "dtype": "U16 (not built)", "shape": \[2\], "bytes": null, "min": null' "$tmp/out"
t convert --dtype f32 "$tmp/k.safetensors" "$tmp/k2.safetensors"
check "convert of a file with an absent tensor fails by name, no OUT" \
    sh -c "[ $rc -eq 1 ] && grep -q \"'u'\" '$tmp/err' && [ ! -e '$tmp/k2.safetensors' ]"

# convert --dtype to every dtype of this build and, for the floats, back:
# arange(6) is exact in every one of them but bool
for dt in $("$tendo" info | awk '/^dtypes:/ { on = 1; next } on && /^  [a-z0-9]+ +[0-9]+ byte/ { print $1 } on && !/^  / { exit }'); do
    t convert --dtype "$dt" "$tmp/m.safetensors" "$tmp/m-$dt.safetensors"
    rc1=$rc
    t inspect --no-stats "$tmp/m-$dt.safetensors"
    r=$(row x)
    case $dt in
    f32|f16|bf16|f64|f8e4m3|f8e5m2)
        t convert --dtype f32 "$tmp/m-$dt.safetensors" "$tmp/m-$dt-back.safetensors"
        t inspect "$tmp/m-$dt-back.safetensors"
        check "convert --dtype $dt and back to f32: arange(6) exact [$r] [$(row x)]" \
            [ "$rc1" -eq 0 -a "$rc" -eq 0 -a "${r%% *}" = x -a "$(echo "$r" | cut -d' ' -f2)" = "$dt" -a \
              "$(row x)" = "x f32 [2, 3] 24 0 5 2.5 1.70783 0 0" ] ;;
    *)
        t inspect "$tmp/m-$dt.safetensors"
        if [ "$dt" = bool ]; then want="x bool [2, 3] 6 0 1 0.833333 0.372678 0 0"
        else want="x $dt [2, 3] $(echo "$r" | cut -d' ' -f5) 0 5 2.5 1.70783 0 0"; fi
        check "convert --dtype $dt: the floats become $dt [$(row x)]" [ "$rc1" -eq 0 -a "$(row x)" = "$want" ] ;;
    esac
done

echo "1..$n"
