#!/bin/sh
# t/interop/t-npy-numpy.sh - .npy files written by real numpy load in tendo bit for
# bit, and files tendo writes load back in numpy bit for bit.  Skips when no
# Python with numpy is around (CI installs python3-numpy).
: "${top_builddir:=.}"
py=
for p in "${BENCH_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import numpy' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then echo "1..0 # SKIP no Python with numpy"; exit 0; fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$py" - "$tmp" <<'PY' || { echo "1..0 # SKIP numpy could not write its files"; exit 0; }
import sys, numpy as np
d = sys.argv[1]
a = np.arange(6, dtype=np.float32).reshape(2, 3)
np.save(f"{d}/a.npy", a)
np.save(f"{d}/f.npy", np.asfortranarray(a))
np.save(f"{d}/h.npy", np.arange(4, dtype=">f2"))
PY
# tendo's half prints TAP lines 1..6; numpy's check adds 3 more
"$top_builddir/t/t-npy" check "$tmp" | grep -v '^1\.\.'
# whether this build has f16 (a build may leave it out: --enable-dtypes)
has_f16=0
grep -q '^#define TENDO_HAVE_F16 1' "$top_builddir/include/tendo/dtype.h" 2>/dev/null && has_f16=1
"$py" - "$tmp" "$top_builddir/t/t-npy" "$has_f16" <<'PY'
import sys, numpy as np
d = sys.argv[1]
a = np.arange(6, dtype=np.float32).reshape(2, 3)
checks = [
    ("out_a.npy", a, "tendo's f32 file loads in numpy bit for bit"),
    ("out_f.npy", a, "tendo's copy of the Fortran view loads in numpy as the same matrix"),
    ("out_h.npy", np.arange(4, dtype=np.float16), "tendo's f16 file loads in numpy bit for bit"),
]
for i, (name, want, what) in enumerate(checks, start=7):
    if want.dtype == np.float16 and sys.argv[3] != "1":
        print(f"ok {i} # SKIP {name}: this build has no f16")
        continue
    try:
        got = np.load(f"{d}/{name}")
        good = got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
    except Exception as e:
        good, what = False, f"{what} ({e})"
    print(f"{'ok' if good else 'not ok'} {i} - {what}")
# every dtype numpy and tendo share, both byte orders and Fortran order:
# numpy's file loads in tendo, whose re-save numpy reads as the same array
import subprocess
n = 9
rng = np.random.default_rng(3)
for descr in ("<f8", ">f8", "|i1", "<i2", ">i2", "<i4", ">i4", "<i8", ">i8", "|u1", "|b1", "<f4", ">f4"):
    dt = np.dtype(descr)
    if dt.kind == "b":
        x = rng.integers(0, 2, (3, 4)).astype(dt)
    elif dt.kind == "f":
        x = rng.standard_normal((3, 4)).astype(dt)
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, (3, 4), dtype=np.int64, endpoint=True).astype(dt)
    for order in ("C", "F"):
        n += 1
        src, out = f"{d}/k{n}.npy", f"{d}/k{n}-tendo.npy"
        np.save(src, np.asarray(x, order=order))
        r = subprocess.run([sys.argv[2], "resave", src, out], capture_output=True, text=True)
        what = f"numpy's '{descr}' ({order} order) loads in tendo; its re-save loads in numpy as the same array"
        if r.returncode != 0 and "is not one tendo was built with" in r.stderr:
            print(f"ok {n} # SKIP {descr}: not in this build")
            continue
        try:
            got = np.load(out)
            good = r.returncode == 0 and got.dtype == dt.newbyteorder("=") and got.shape == x.shape and \
                got.tobytes() == x.astype(dt.newbyteorder("=")).tobytes()
        except Exception as e:
            good, what = False, f"{what} ({e}; {r.stderr.strip()})"
        print(f"{'ok' if good else 'not ok'} {n} - {what}")
print(f"1..{n}")
PY
