#!/bin/sh
# t/interop/t-fp8-mldtypes.sh - tendo's FP8 conversions agree bit for bit with
# Python's ml_dtypes (float8_e4m3fn, float8_e5m2): all 256 patterns widened
# to float32, all 65536 f16 values and 100000 random float32 (any bits,
# and near the FP8 ranges) narrowed, and float64 narrowed once.
# `t/t-fp8 dump` does tendo's side.  Skips without numpy and ml_dtypes.
#
# float64: ml_dtypes' scalar constructor float8_e4m3fn(x) rounds once, as
# tendo does; its numpy cast array.astype(float8_e4m3fn) from float64
# went through float32 and could round twice until ml_dtypes 0.7.  Tendo
# is compared with the former; the latter must equal tendo's float64
# conversion (ml_dtypes 0.7 on) or its float32 conversion of float32(x).
: "${top_builddir:=.}"
py=
for p in "${BENCH_PYTHON:-}" "${PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import numpy, ml_dtypes' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then echo "1..0 # SKIP no Python with numpy and ml_dtypes"; exit 0; fi
PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/t/t-fp8" <<'PY'
import subprocess, sys, warnings
from tap import Tap
import numpy as np, ml_dtypes

warnings.simplefilter("ignore")
prog = sys.argv[1]
E4, E5 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
tap = Tap()
ok = tap.ok


def tendo(kind, arr=None):
    data = b"" if arr is None else arr.tobytes()
    out = subprocess.run([prog, "dump", kind], input=data, stdout=subprocess.PIPE, check=True).stdout
    return np.frombuffer(out, dtype=np.uint32 if kind == "widen" else np.uint8)

def first_diff(inp, got, want, fmt):
    i = int(np.flatnonzero(got != want)[0])
    return f"{(got != want).sum()} differ; first: input {fmt(inp[i])}: tendo 0x{int(got[i]):x}, ml_dtypes 0x{int(want[i]):x}"

# widening: every pattern
w = tendo("widen")
pat = np.arange(256, dtype=np.uint8)
for k, (t, name) in enumerate(((E4, "float8_e4m3fn"), (E5, "float8_e5m2"))):
    want = pat.view(t).astype(np.float32).view(np.uint32)
    got = w[256 * k:256 * (k + 1)]
    ok(np.array_equal(got, want), f"{name}: all 256 patterns widen to float32 as ml_dtypes does",
       first_diff(pat, got, want, hex) if not np.array_equal(got, want) else "")

# narrowing float32
rng = np.random.default_rng(12345)
f16 = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
bits = rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32).view(np.float32)
near = (rng.standard_normal(50000) * np.exp2(rng.integers(-26, 20, 50000))).astype(np.float32)
specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 448, 464, 464.00003, 480, 57344, 61440,
                     61439.996, 3.4e38, 1e-45, 2**-10, 2**-17], dtype=np.float32)
specials = np.concatenate([specials, np.array([0x7f800001, 0xff800001, 0x7fffffff, 0x7fa00000],
                                              dtype=np.uint32).view(np.float32)])
for inp, what in ((f16, "all 65536 f16 values"), (np.concatenate([bits, near, specials]), "100000 random float32 and specials")):
    got = tendo("f32", inp).reshape(-1, 2)
    for k, (t, name) in enumerate(((E4, "float8_e4m3fn"), (E5, "float8_e5m2"))):
        want = inp.astype(t).view(np.uint8)
        good = np.array_equal(got[:, k], want)
        ok(good, f"{name}: float32 -> fp8 on {what} matches ml_dtypes",
           "" if good else first_diff(inp.view(np.uint32), got[:, k], want, hex))

# narrowing float64
d = np.concatenate([
    rng.integers(0, 2**64, 30000, dtype=np.uint64).view(np.float64),
    rng.standard_normal(30000) * np.exp2(rng.integers(-26, 20, 30000)),
    # just off the midpoints, where rounding through float32 rounds twice
    np.array([(a + b) / 2 * (1 + s * 2.0**-30) for t in (E4, E5)
              for a, b in zip(np.arange(0, 0x7b, dtype=np.uint8).view(t).astype(np.float64),
                              np.arange(1, 0x7c, dtype=np.uint8).view(t).astype(np.float64))
              for s in (-1, 1)]),
    np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 5e-324, 464 + 2**-30, 61440 - 2**-30,
              1.0625 + 2**-40, 1.125 + 2**-40, 2.0**-10 + 2**-40, 2.0**-17 + 2**-45]),
])
got = tendo("f64", d).reshape(-1, 2)
f32_path = tendo("f32", d.astype(np.float32)).reshape(-1, 2)
for k, (t, name) in enumerate(((E4, "float8_e4m3fn"), (E5, "float8_e5m2"))):
    want = np.array([np.array(t(float(x))).view(np.uint8) for x in d], dtype=np.uint8)
    good = np.array_equal(got[:, k], want)
    ok(good, f"{name}: float64 -> fp8 on {len(d)} values matches ml_dtypes' scalar constructor (one rounding)",
       "" if good else first_diff(d.view(np.uint64), got[:, k], want, hex))
    # ml_dtypes before 0.7 rounds through float32 here; 0.7 rounds once.
    # Either way the cast must be one of tendo's two conversions, exactly.
    cast = d.astype(t).view(np.uint8)
    twice = int((cast != want).sum())
    once = np.array_equal(cast, got[:, k])
    via32 = twice > 0 and np.array_equal(cast, f32_path[:, k])
    how = "once, as tendo's float64 conversion" if once else f"through float32, as tendo's float32 conversion ({twice} differ)"
    ok(once or via32, f"{name}: ml_dtypes' float64 astype rounds {how}",
       "" if once or via32 else first_diff(d.view(np.uint64), got[:, k], cast, hex))
tap.done()
PY
