#!/bin/sh
# t/interop/t-safetensors-py.sh - files written by the real safetensors package
# (PyPI) load in tendo bit for bit, and files tendo writes load back in it
# bit for bit.  Skips when no Python has safetensors and numpy (CI installs
# them; see .ci/run).
: "${top_builddir:=.}"
py=
for p in "${BENCH_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import numpy, safetensors' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then echo "1..0 # SKIP no Python with numpy and safetensors (pip install safetensors)"; exit 0; fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$py" - "$tmp" <<'PY' || { echo "1..0 # SKIP the safetensors package could not write its file"; exit 0; }
import sys, numpy as np, safetensors
d = sys.argv[1]
# bf16 has no numpy dtype: small integers are exact, so their bf16 bits
# are the top halves of their f32 bits
bf16 = (np.arange(7, dtype=np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
tensors = {
    "f32": ("F32", "float32", (2, 3, 4), (np.arange(24, dtype="<f4") / 2 - 3).astype("<f4").tobytes()),
    "f16": ("F16", "float16", (10,), np.arange(10, dtype="<f2").tobytes()),
    "bf16": ("BF16", "bfloat16", (7,), bf16),
    "scalar": ("F32", "float32", (), np.array(3.5, dtype="<f4").tobytes()),
    "empty": ("F16", "float16", (0, 5), b""),
}
metadata = {"framework": "test", "note": "\u00fcn\u00efcode"}
path = f"{d}/py.safetensors"
if hasattr(safetensors, "TensorSpec"):  # 0.8 and later: raw pointers
    keep = {k: np.frombuffer(v[3] or b"\0", np.uint8) for k, v in tensors.items()}
    safetensors.serialize_file({k: safetensors.TensorSpec(dtype=v[1], shape=list(v[2]),
                                data_ptr=keep[k].ctypes.data, data_len=len(v[3]))
                                for k, v in tensors.items()}, path, metadata=metadata)
else:  # earlier: dicts of bytes
    safetensors.serialize_file({k: {"dtype": v[0], "shape": list(v[2]), "data": v[3]}
                                for k, v in tensors.items()}, path, metadata=metadata)
PY
# tendo's half prints TAP lines 1..9; the package's checks follow
"$top_builddir/t/t-safetensors" check "$tmp" | grep -v '^1\.\.'
"$py" - "$tmp" "$top_builddir/tools/tendo" "$top_builddir/t/t-safetensors" <<'PY'
import sys, numpy as np, safetensors
from safetensors import safe_open
d = sys.argv[1]
n = 9
def check(good, what):
    global n
    n += 1
    print(f"{'ok' if good else 'not ok'} {n} - {what}")
def load(path):
    with open(path, "rb") as f:
        return dict(safetensors.deserialize(f.read()))
def skip(what, why):
    global n
    n += 1
    print(f"ok {n} # SKIP {what}: {why}")
# a build without f16 or bf16 cannot re-save the package's file (its half
# checks the refusal) and writes neither into its own: tendo inspect says so
import json, subprocess
tool = sys.argv[2]
r = subprocess.run([tool, "inspect", "--json", f"{d}/py.safetensors"], capture_output=True, text=True)
try:
    halves = sorted(t["name"] for t in json.loads(r.stdout)[0]["tensors"] if t["dtype"].endswith(" (not built)"))
except Exception as e:
    halves = None
    check(False, f"tendo inspect --json reads the package's file ({e}: {r.stderr.strip()})")
if halves:
    why = f"this build lacks the dtypes of {halves}"
    for what in ("the package reads tendo's re-save", "the re-save is byte for byte the package's file"):
        skip(what, why)
else:
    try:
        mine, theirs = load(f"{d}/resaved.safetensors"), load(f"{d}/py.safetensors")
        check(mine.keys() == theirs.keys() and all(
            mine[k]["dtype"] == theirs[k]["dtype"] and mine[k]["shape"] == theirs[k]["shape"]
            and bytes(mine[k]["data"]) == bytes(theirs[k]["data"]) for k in theirs),
            "the package reads tendo's re-save of its file: every dtype, shape and byte equal")
    except Exception as e:
        check(False, f"the package reads tendo's re-save ({e})")
    with open(f"{d}/resaved.safetensors", "rb") as a, open(f"{d}/py.safetensors", "rb") as b:
        check(a.read() == b.read(), "tendo's re-save is byte for byte the package's file")
try:
    with safe_open(f"{d}/tendo.safetensors", framework="np") as f:
        meta = f.metadata()
        t = f.get_tensor("transposed")
        h = None if halves else f.get_tensor("f16")
    want = np.arange(6, dtype=np.float32).reshape(2, 3).T
    check(t.dtype == np.float32 and t.shape == (3, 2) and t.tobytes() == np.ascontiguousarray(want).tobytes(),
          "safe_open(framework='np') reads tendo's transposed f32 view as the transposed matrix")
    if halves:
        skip("and its f16 copy", why)
    else:
        check(h.dtype == np.float16 and h.tobytes() == want.astype(np.float16).tobytes(),
              "and its f16 copy, bit for bit")
    check(meta == {"written_by": "tendo"}, "and its metadata")
except Exception as e:
    for what in ("safe_open reads tendo's f32", "and its f16", "and its metadata"):
        check(False, f"{what} ({e})")
if halves:
    skip("and its bf16 tensor", why)
else:
    try:
        b = load(f"{d}/tendo.safetensors")["bf16"]
        want = (np.arange(6, dtype=np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
        check(b["dtype"] == "BF16" and b["shape"] == [2, 3] and bytes(b["data"]) == want, "and its bf16 tensor, bit for bit")
    except Exception as e:
        check(False, f"and its bf16 tensor ({e})")
# every dtype of tendo's: the package's file loads in tendo bit for bit (a
# re-save gives the package's bytes back, tensor by tensor and as a whole
# file), and tendo inspect's statistics of it are numpy's
import os
helper = sys.argv[3]
rng = np.random.default_rng(7)
def raw(n):
    return rng.integers(0, 256, n, dtype=np.uint8)
f64 = np.concatenate([rng.standard_normal(6) * 1e6, [1e100]]).astype("<f8")
every = {
    "f64": ("float64", (7,), f64),
    "i8": ("int8", (3, 5), rng.integers(-128, 128, 15).astype("|i1")),
    "i16": ("int16", (3,), np.array([-32768, 32767, -1], "<i2")),
    "i32": ("int32", (2, 3), rng.integers(-2**31, 2**31, 6).astype("<i4")),
    "i64": ("int64", (5,), np.array([2**62 + 1, -2**63, 2**63 - 1, 0, -7], "<i8")),
    "u8": ("uint8", (9,), rng.integers(0, 256, 9).astype("|u1")),
    "bool": ("bool", (2, 3), np.array([1, 0, 1, 1, 0, 0], "|u1")),
    "f8e4m3": ("float8_e4m3fn", (11,), raw(11)),
    "f8e5m2": ("float8_e5m2", (13,), raw(13)),
    "f32": ("float32", (3,), np.array([1.5, -2, 0.25], "<f4")),
}
keep = {k: np.ascontiguousarray(v[2]).view(np.uint8) for k, v in every.items()}
src, back = f"{d}/every.safetensors", f"{d}/every-tendo.safetensors"
safetensors.serialize_file({k: safetensors.TensorSpec(dtype=v[0], shape=list(v[1]), data_ptr=keep[k].ctypes.data,
                            data_len=keep[k].size) for k, v in every.items()}, src, metadata=None)
r = subprocess.run([tool, "inspect", "--json", src], capture_output=True, text=True)
try:
    rows = {t["name"]: t for t in json.loads(r.stdout)[0]["tensors"]}
except Exception as e:
    rows = {}
absent = sorted(k for k, t in rows.items() if t["dtype"].endswith(" (not built)"))
if absent:  # a build without some dtypes: the rest loads, the absent ones are listed by name
    theirs = load(src)
    check(r.returncode == 0 and len(rows) == len(every) and all(
        rows[k]["dtype"] == theirs[k]["dtype"] + " (not built)" and rows[k]["shape"] == list(every[k][1]) for k in absent),
        f"tendo loads the package's file of every dtype; those this build lacks are listed (not built): {absent}")
    for what in ("the package reads it back", "byte for byte the package's file"):
        print(f"ok {n + 1} # SKIP {what}: this build lacks {absent}")
        n += 1
else:
    r = subprocess.run([helper, "resave", src, back], capture_output=True, text=True)
    check(r.returncode == 0, f"tendo loads and re-saves the package's file of every dtype {r.stderr.strip()}")
    try:
        mine, theirs = load(back), load(src)
        bad = [k for k in theirs if mine[k]["dtype"] != theirs[k]["dtype"] or mine[k]["shape"] != theirs[k]["shape"]
               or bytes(mine[k]["data"]) != bytes(theirs[k]["data"])]
        check(mine.keys() == theirs.keys() and not bad,
              f"the package reads it back: F64 I8 I16 I32 I64 U8 BOOL F8_E4M3 F8_E5M2, every byte equal {bad}")
    except Exception as e:
        check(False, f"the package reads tendo's file of every dtype ({e})")
    with open(src, "rb") as a, open(back, "rb") as b:
        check(a.read() == b.read(), "tendo's re-save is byte for byte the package's file (same data layout)")
try:
    bad = []
    for k in ("f64", "i8", "i16", "i32", "i64", "u8", "bool"):
        if k in absent:
            continue
        x = every[k][2].astype(np.float64) if k != "i64" else np.array([float(v) for v in every[k][2]])
        t = rows[k]
        if t["dtype"] != k or t["min"] != float(x.min()) or t["max"] != float(x.max()) or \
           abs(t["mean"] - x.mean()) > 1e-9 * abs(x).max() or abs(t["std"] - x.std()) > 1e-9 * abs(x).max():
            bad.append((k, t, x.min(), x.max(), x.mean(), x.std()))
    check(not bad, f"tendo inspect: statistics of f64, integers and bool are numpy's (f64 1e100 not narrowed to f32) {bad}")
except Exception as e:
    check(False, f"tendo inspect --json of every dtype ({e}; {r.stderr.strip()})")
print(f"1..{n}")
PY
