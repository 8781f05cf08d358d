#!/bin/sh
# t/interop/t-casts-numpy.sh - every cast of every dtype pair, bit for bit against
# numpy and ml_dtypes: all 65536 f16 and bf16 patterns, all 256 patterns of
# each fp8 and of i8 and u8, all 65536 i16 values, and edge cases of f32,
# f64, i32 and i64 (signed zeros, subnormals, ties, the largest values,
# overflow, infinities, NaN, values past every integer range), each
# converted to every other dtype of the build by `tendo convert --from all`.
#
# The references follow API.md: float -> float rounds once to nearest even
# (numpy and ml_dtypes from float32, where every source here is exact; an
# exact search for f64 and wide integers, whose numpy casts may round
# twice); float -> integer truncates and saturates, NaN gives 0; integer ->
# integer wraps (numpy's astype); anything -> bool is != 0.  A NaN result
# must be a NaN of the input's sign; its payload is not compared (numpy,
# ml_dtypes, F16C and GPUs keep different payload bits and quiet signaling
# NaNs or not).  Skips without numpy and ml_dtypes.
: "${top_builddir:=.}"
py=
for p in "${BENCH_PYTHON:-}" "${PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import numpy, ml_dtypes' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then echo "1..0 # SKIP no Python with numpy and ml_dtypes"; exit 0; fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/tools/tendo" "$tmp" <<'PY'
import json, struct, subprocess, sys, warnings
from tap import Tap
from fractions import Fraction
import numpy as np, ml_dtypes

warnings.simplefilter("ignore")
prog, tmp = sys.argv[1], sys.argv[2]
DTYPES = {  # tendo name: (safetensors code, numpy dtype, kind)
    "f32": ("F32", np.float32, "float"), "f16": ("F16", np.float16, "float"),
    "bf16": ("BF16", ml_dtypes.bfloat16, "float"), "f64": ("F64", np.float64, "float"),
    "f8e4m3": ("F8_E4M3", ml_dtypes.float8_e4m3fn, "float"), "f8e5m2": ("F8_E5M2", ml_dtypes.float8_e5m2, "float"),
    "i8": ("I8", np.int8, "int"), "i16": ("I16", np.int16, "int"), "i32": ("I32", np.int32, "int"),
    "i64": ("I64", np.int64, "int"), "u8": ("U8", np.uint8, "int"), "bool": ("BOOL", np.bool_, "bool"),
}
CODE = {v[0]: k for k, v in DTYPES.items()}
info = subprocess.run([prog, "info"], stdout=subprocess.PIPE, text=True, check=True).stdout
built = [l.split()[0] for l in info.splitlines() if l.startswith("  ") and "safetensors" in l]
built = [d for d in built if d in DTYPES]
rng = np.random.default_rng(20261124)
tap = Tap()
ok = tap.ok


def patterns(dt, bits):
    """Every bit pattern of a 16- or 8-bit dtype."""
    return np.arange(1 << bits, dtype=np.uint16 if bits == 16 else np.uint8).view(dt)


F32_EDGES = [0.0, -0.0, 2.0 ** -149, -(2.0 ** -149), 2.0 ** -126 * (1 - 2.0 ** -23), 2.0 ** -126, 1.0, -1.0,
             0.5, 1.5, 2.5, -2.5, 0.49999997, 127.5, 127.99999, 128.0, -128.5, -129.0, 255.5, 256.0, -0.99999994,
             32767.5, 32768.0, -32769.0, 65504.0, 65519.996, 65520.0, 448.0, 464.0, 480.0, 57344.0, 61440.0,
             1.00390625, 1.01171875, 2147483520.0, 2.0 ** 31, -(2.0 ** 31), -2147483904.0, 2.0 ** 63,
             -(2.0 ** 63), 2.0 ** 64, 1e20, -1e20, 3.4028235e38, -3.4028235e38, np.inf, -np.inf, np.nan, -np.nan,
             2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -9, 2.0 ** -10, 2.0 ** -17, 2.0 ** -18]
F64_EDGES = F32_EDGES + [2.0 ** -1074, 1e-300, 1e300, -1e300, 1.7976931348623157e308, 2.0 ** 53 + 2,
                         9223372036854774784.0, 2.0 ** 63 - 2048, 1 + 2.0 ** -11 + 2.0 ** -40,
                         1 + 2.0 ** -8 + 2.0 ** -40, 1 + 2.0 ** -4 + 2.0 ** -40, 1 + 2.0 ** -3 + 2.0 ** -40,
                         65504 + 16 + 2.0 ** -30, 448 + 16 + 2.0 ** -30, 2.0 ** -150, 2.0 ** -150 * 1.0000001,
                         4294967295.5, 4294967296.0, -2147483648.5, -2147483649.0, 2147483647.5]
I64_EDGES = [0, 1, -1, 2 ** 63 - 1, -2 ** 63, -2 ** 63 + 1, 2 ** 24 + 1, 2 ** 31 - 1, 2 ** 31, -2 ** 31, 2 ** 32 + 1,
             2 ** 53 + 1, -(2 ** 53 + 1), 2 ** 60 + 2 ** 52 + 1, -(2 ** 60 + 2 ** 52 + 1), 2 ** 60 + 2 ** 52,
             2 ** 62 + 2 ** 54 - 1, 65520, 65519, 464, 463, 255, 256, 128, -129, 32768, -32769]


def sources():
    """name -> array, every source dtype of the build."""
    out = {}
    out["f16"] = patterns(np.float16, 16)
    out["bf16"] = patterns(ml_dtypes.bfloat16, 16)
    out["f8e4m3"] = patterns(ml_dtypes.float8_e4m3fn, 8)
    out["f8e5m2"] = patterns(ml_dtypes.float8_e5m2, 8)
    bits = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    wide = (rng.standard_normal(20000) * np.exp2(rng.integers(-30, 70, 20000))).astype(np.float32)
    out["f32"] = np.concatenate([np.array(F32_EDGES, np.float32), bits, wide])
    bits64 = rng.integers(0, 2 ** 63, 5000, dtype=np.uint64).view(np.float64) * rng.choice([-1, 1], 5000)
    wide64 = rng.standard_normal(20000) * np.exp2(rng.integers(-160, 80, 20000))
    out["f64"] = np.concatenate([np.array(F64_EDGES, np.float64), bits64, wide64])
    out["i8"] = np.arange(256, dtype=np.uint8).view(np.int8)
    out["u8"] = np.arange(256, dtype=np.uint8)
    out["i16"] = np.arange(65536, dtype=np.uint16).view(np.int16)
    i32 = rng.integers(-2 ** 31, 2 ** 31, 20000, dtype=np.int64).astype(np.int32)
    out["i32"] = np.concatenate([np.array([0, 1, -1, 2 ** 31 - 1, -2 ** 31, 2 ** 24 + 1, 16777219, 65520, 464, 255,
                                           256, -129, 32768, -32769], np.int32), i32])
    i64 = rng.integers(-2 ** 63, 2 ** 63 - 1, 10000, dtype=np.int64) >> rng.integers(0, 63, 10000)
    out["i64"] = np.concatenate([np.array(I64_EDGES, np.int64), i64])
    out["bool"] = np.array([False, True, True, False])
    return {k: v for k, v in out.items() if k in built}


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, arr in tensors.items():
        data = arr.tobytes()
        header[name] = {"dtype": DTYPES[name][0], "shape": [int(arr.size)], "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    hl = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + hl])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        out[name] = (CODE[e["dtype"]], raw[8 + hl + a:8 + hl + b])
    return out


def exact(v):
    """v (a numpy float or int scalar) as an exact Fraction, None for inf/NaN."""
    if isinstance(v, (np.integer, int)):
        return Fraction(int(v))
    f = float(v)
    return Fraction(f) if np.isfinite(f) else None


def round_once(v, dt):
    """Exact v (a Fraction) rounded once to nearest even in float dtype dt.
    Past the largest finite value M by half a step or more (a tie rounds
    to even, as if the exponent went on), the overflow value of dt from a
    float32 infinity (inf, or NaN in f8e4m3): else the nearest of the cast of
    float(v) (within one step of the answer) and its two neighbours, the
    even one on a tie."""
    bits_t = np.uint8 if np.dtype(dt).itemsize == 1 else np.uint16
    m = np.array([ml_dtypes.finfo(dt).max], dtype=dt)
    mbits = int(m.view(bits_t)[0])
    top = Fraction(float(m.astype(np.float64)[0]))
    below = Fraction(float(np.array([mbits - 1], bits_t).view(dt).astype(np.float64)[0]))
    limit = top + (top - below) / 2
    if abs(v) > limit or (abs(v) == limit and mbits % 2):
        return np.array([np.inf if v > 0 else -np.inf], np.float32).astype(dt)[0]
    b = int(np.array([float(v)]).astype(dt).view(bits_t)[0])
    best = None
    for nb in (b - 1, b, b + 1):
        if not 0 <= nb < (1 << (8 * np.dtype(dt).itemsize)):
            continue
        x = np.array([nb], bits_t).view(dt)
        xf = float(x.astype(np.float64)[0])
        if not np.isfinite(xf) or (xf != 0 and (xf < 0) != (v < 0)):
            continue
        d = abs(Fraction(xf) - v)
        if best is None or d < best[0] or (d == best[0] and nb % 2 == 0):
            best = (d, nb, x[0])
    return best[2]


def to_float(src, x, dst):
    """The reference of float or integer x (dtype src) cast to float dtype dst."""
    dt = DTYPES[dst][1]
    if src == "bool":
        return x.astype(np.uint8).astype(dt)
    if dst == "f64" or (DTYPES[src][2] == "float" and src != "f64"):
        return x.astype(np.float32).astype(dt) if dst != "f64" else x.astype(np.float64)
    if dst == "f32" and src in ("f64", "i64", "i32"):
        return x.astype(np.float32)  # a direct C cast: rounds once
    if src in ("i8", "u8", "i16"):
        return x.astype(np.float32).astype(dt)  # exact in float32
    # f64, i32 or i64 to a narrow float: the exact search where float32 is not exact
    out = x.astype(np.float32).astype(dt)
    inexact = x.astype(np.float32).astype(x.dtype) != x
    if DTYPES[src][2] == "float":
        inexact &= np.isfinite(x)
    for i in np.flatnonzero(inexact):
        out[i] = round_once(exact(x[i]), dt)
    return out


def to_int(src, x, dst):
    """The reference of x (dtype src) cast to integer dtype dst."""
    dt = DTYPES[dst][1]
    if DTYPES[src][2] != "float":
        return x.astype(np.int64).astype(dt) if src != "bool" else x.astype(dt)
    info = np.iinfo(dt)
    f = x.astype(np.float64)
    out = []
    for v in f:
        if np.isnan(v):
            out.append(0)
        elif v >= info.max:
            out.append(info.max)
        elif v <= info.min:
            out.append(info.min)
        else:
            out.append(int(np.trunc(v)))
    return np.array(out, dtype=np.int64).astype(dt)


def nan_signs(b, dt):
    """For the raw bytes b of dtype dt: per element, 1 for a NaN with the
    sign bit clear, 2 with it set, 0 for anything else."""
    y = np.frombuffer(b, dtype=DTYPES[dt][1])
    if DTYPES[dt][2] != "float":
        return np.zeros(y.size, np.int8)
    u = y.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[y.dtype.itemsize])
    neg = (u >> u.dtype.type(8 * y.dtype.itemsize - 1)) != 0
    return np.isnan(y.astype(np.float64)) * (1 + neg.astype(np.int8))


def reference(src, x, dst):
    if dst == src:
        return x
    if dst == "bool":
        return x.astype(np.float64) != 0 if DTYPES[src][2] == "float" else x != 0
    if DTYPES[dst][2] == "float":
        return to_float(src, x, dst)
    return to_int(src, x, dst)


def show(dt, b):
    return repr(np.frombuffer(b, dtype=DTYPES[dt][1])[0])


srcs = sources()
inp = f"{tmp}/in.safetensors"
write_safetensors(inp, srcs)
for dst in built:
    out = f"{tmp}/to-{dst}.safetensors"
    r = subprocess.run([prog, "convert", "--from", "all", "--dtype", dst, inp, out], stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        for src in srcs:
            ok(False, f"{src} -> {dst}", f"tendo convert failed: {r.stderr.strip()}")
        continue
    got = read_safetensors(out)
    for src, x in srcs.items():
        gdt, gbytes = got[src]
        want = reference(src, x, dst)
        wbytes = np.ascontiguousarray(want).astype(DTYPES[dst][1]).tobytes()
        what = f"{src} ({x.size} values) -> {dst}: bit for bit (NaN: its sign)"
        if gdt != dst or gbytes == wbytes:
            ok(gdt == dst, what, f"the file says {gdt}")
            continue
        size = np.dtype(DTYPES[dst][1]).itemsize
        g = np.frombuffer(gbytes, dtype=np.uint8).reshape(-1, size)
        w = np.frombuffer(wbytes, dtype=np.uint8).reshape(-1, size)
        gn, wn = nan_signs(gbytes, dst), nan_signs(wbytes, dst)
        bad = np.flatnonzero(((g != w).any(axis=1) & ((gn == 0) | (wn == 0))) | (gn != wn))
        if bad.size == 0:
            ok(True, what)
            continue
        i = int(bad[0])
        ok(False, what, f"{bad.size} differ; first: input {x[i]!r} ({x[i:i + 1].tobytes().hex()}): "
                        f"tendo {gbytes[i * size:(i + 1) * size].hex()}, reference {wbytes[i * size:(i + 1) * size].hex()}")
tap.done()
PY
