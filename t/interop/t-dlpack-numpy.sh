#!/bin/sh
# t/interop/t-dlpack-numpy.sh - DLPack against a real consumer and producer: numpy.
#
# First the header: <tendo/dlpack.h> compiles on its own with -pedantic,
# together with a 1.x dlpack.h in either order, and stops with a clear
# #error after a 0.x one.  Then, for every Python around with numpy >= 1.23
# (the venv's numpy 2.x takes the versioned capsule, Debian's 1.24 the
# legacy one), through ctypes and the built libtendo.so: numpy.from_dlpack
# on tensors tendo exports (f32, f16, a transposed view, 0-d, empty) sees the same
# values bit for bit at the same address (no copy; writable through a
# versioned capsule, read-only as numpy makes legacy ones), and the
# deleter runs exactly once when the array dies; tendo imports numpy's own
# exports at numpy's address, gives them back when freed, and refuses
# read-only ones.  What cannot run says "# SKIP" and why.
: "${top_builddir:=.}" "${top_srcdir:=.}" "${CC:=cc}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
results=$tmp/results
: >"$results"
pass() { echo "ok - $*" >>"$results"; }
fail() { echo "not ok - $*" >>"$results"; }
check() { # check CONDITION-STATUS DESCRIPTION
    if [ "$1" -eq 0 ]; then pass "$2"; else fail "$2"; fi
}
skip_n() { # skip_n N REASON
    i=0
    while [ "$i" -lt "$1" ]; do echo "ok - # SKIP $2" >>"$results"; i=$((i + 1)); done
}

# ---- the header ----------------------------------------------------------------
inc="-I$top_builddir/include -I$top_srcdir/include -I$tmp"
mkdir -p "$tmp/dlpack" "$tmp/old/dlpack"
# a 1.x dlpack.h: tendo's declaration of the ABI, under the upstream guard
sed -n '/^#else \/\* !DLPACK_DLPACK_H_ \*\//,/^#endif \/\* DLPACK_DLPACK_H_ \*\//p' \
    "$top_srcdir/include/tendo/dlpack.h" | sed '1d;$d' >"$tmp/body.h"
{ printf '#ifndef DLPACK_DLPACK_H_\n#include <stddef.h>\n#include <stdint.h>\n'; cat "$tmp/body.h"; echo '#endif'; } \
    >"$tmp/dlpack/dlpack.h"
# a 0.6 dlpack.h, as Debian ships: no DLPACK_MAJOR_VERSION
cat >"$tmp/old/dlpack/dlpack.h" <<'EOF'
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
#define DLPACK_VERSION 60
#define DLPACK_ABI_VERSION 1
#endif
EOF
use='int main(void) { DLManagedTensorVersioned *v = tendo_to_dlpack_versioned(0); DLManagedTensor *l = 0;
  return (v != 0) + (l != 0) + (int)sizeof(DLTensor) * 0 + kDLBfloat * 0 + DLPACK_MAJOR_VERSION * 0; }'
cc_try() { # cc_try NAME [-Iextra] HEADER... : compiles a use of both headers
    name=$1; shift
    extra=
    case $1 in -I*) extra=$1; shift ;; esac
    { for h in "$@"; do echo "#include <$h>"; done; echo "$use"; } >"$tmp/$name.c"
    # shellcheck disable=SC2086
    $CC -std=c11 -pedantic -Wall -Wextra -Werror $extra $inc -c "$tmp/$name.c" -o "$tmp/$name.o" >"$tmp/$name.err" 2>&1
}
cc_try alone tendo/dlpack.h
check $? "<tendo/dlpack.h> compiles on its own (-std=c11 -pedantic -Wall -Wextra -Werror)"
cc_try after_1x dlpack/dlpack.h tendo/dlpack.h
check $? "a DLPack 1.x dlpack.h then <tendo/dlpack.h>: compiles, one set of declarations"
cc_try before_1x tendo/dlpack.h dlpack/dlpack.h
check $? "<tendo/dlpack.h> then a DLPack 1.x dlpack.h: compiles"
cc_try after_0x "-I$tmp/old" dlpack/dlpack.h tendo/dlpack.h
st=$?
why=$(grep -o 'needs DLPack 1.x[^;"]*' "$tmp/after_0x.err" | head -n 1)
[ "$st" -ne 0 ] && [ -n "$why" ]
check $? "a DLPack 0.x dlpack.h first stops the build with tendo's #error: $why"
if [ -f /usr/include/dlpack/dlpack.h ]; then
    # a copy ahead of the fake headers in $tmp (gcc ignores -I/usr/include)
    mkdir -p "$tmp/sys/dlpack" && cp /usr/include/dlpack/dlpack.h "$tmp/sys/dlpack/"
    if grep -q 'DLPACK_MAJOR_VERSION' /usr/include/dlpack/dlpack.h; then
        cc_try system_dlpack "-I$tmp/sys" dlpack/dlpack.h tendo/dlpack.h
        check $? "the system's DLPack 1.x dlpack.h then <tendo/dlpack.h>: compiles"
    else
        cc_try system_dlpack "-I$tmp/sys" dlpack/dlpack.h tendo/dlpack.h
        st=$?
        [ "$st" -ne 0 ] && grep -q 'needs DLPack 1.x' "$tmp/system_dlpack.err"
        check $? "the system's DLPack 0.x dlpack.h then <tendo/dlpack.h>: tendo's #error"
    fi
else
    skip_n 1 "no system dlpack/dlpack.h (libdlpack-dev)"
fi

# ---- numpy ------------------------------------------------------------------------
NUMPY_TESTS=59 # what t.py below prints for one Python
lib=
dlname=$(sed -n "s/^dlname='\(.*\)'$/\1/p" "$top_builddir/libtendo.la" 2>/dev/null)
[ -n "$dlname" ] && [ -f "$top_builddir/.libs/$dlname" ] && lib=$top_builddir/.libs/$dlname
pythons=
seen=
for p in "${BENCH_PYTHON:-}" "${PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] || continue
    where=$("$p" -c 'import numpy, sys
from numpy import from_dlpack
v = tuple(int(x) for x in numpy.__version__.split(".")[:2])
sys.exit(1) if v < (1, 23) else print(numpy.__file__)' 2>/dev/null) || continue
    case " $seen " in *" $where "*) continue ;; esac
    seen="$seen $where"
    pythons="$pythons $p"
done

# The capsule destructor is C: it runs while numpy may have an exception
# pending, which Python code called through ctypes cannot cope with.
cat >"$tmp/capsule.c" <<'EOF'
#include <tendo/dlpack.h>
typedef struct _object PyObject;
extern int PyCapsule_IsValid(PyObject *capsule, const char *name);
extern void *PyCapsule_GetPointer(PyObject *capsule, const char *name);
extern void PyErr_Fetch(PyObject **type, PyObject **value, PyObject **traceback);
extern void PyErr_Restore(PyObject *type, PyObject *value, PyObject *traceback);
void capsule_destructor(PyObject *capsule);

/* A capsule still named "dltensor[_versioned]" was never consumed: its
 * tensor is the producer's to delete. */
void capsule_destructor(PyObject *capsule)
{
    PyObject *type, *value, *traceback;

    PyErr_Fetch(&type, &value, &traceback);
    if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (m->deleter)
            m->deleter(m);
    } else if (PyCapsule_IsValid(capsule, "dltensor")) {
        DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
        if (m->deleter)
            m->deleter(m);
    }
    PyErr_Restore(type, value, traceback);
}
EOF

cat >"$tmp/t.py" <<'PY'
import ctypes as C, gc, sys
import numpy as np

lib = C.CDLL(sys.argv[1])
capsule_destructor = C.cast(C.CDLL(sys.argv[2]).capsule_destructor, C.c_void_p)
tag = "numpy " + np.__version__
counts = []  # per export: calls of its deleter


def report(good, what):
    print(("ok - " if good else "not ok - ") + tag + ": " + what)


class Device(C.Structure):
    _fields_ = [("type", C.c_int), ("index", C.c_int)]


class Stats(C.Structure):
    _fields_ = [(n, C.c_int64) for n in
                "allocations deallocations bytes_in_use bytes_cached peak hits misses".split()]


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class Versioned(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32), ("manager_ctx", C.c_void_p),
                ("deleter", C.c_void_p), ("flags", C.c_uint64), ("dl_tensor", DLTensor)]


class Legacy(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p)]


DELETER = C.CFUNCTYPE(None, C.c_void_p)
P = C.c_void_p
for name, res, args in [
        ("tendo_cpu", Device, []), ("tendo_pool_get_stats", Stats, [Device]),
        ("tensor_f32_full", P, [C.c_int, P, C.c_double, Device]), ("tensor_f32_zeros", P, [C.c_int, P, Device]),
        ("tensor_f32_from_data", P, [P, C.c_int, P, Device]), ("tensor_f16_from_data", P, [P, C.c_int, P, Device]),
        ("tensor_bf16_from_data", P, [P, C.c_int, P, Device]), ("tensor_f32_transpose", P, [P, C.c_int, C.c_int]),
        ("tendo_tensor_data", P, [P]), ("tendo_tensor_stride", C.POINTER(C.c_int64), [P]),
        ("tendo_tensor_free", None, [P]), ("tendo_to_dlpack_versioned", P, [P]), ("tendo_to_dlpack", P, [P]),
        ("tendo_from_dlpack_versioned", P, [P]), ("tendo_from_dlpack", P, [P]),
        ("tendo_last_error", P, []), ("tendo_error_status", C.c_int, [P]),
        ("tendo_error_message", C.c_char_p, [P]), ("tendo_tensor_dtype", C.c_int, [P]),
        ("tendo_dtype_name", C.c_char_p, [C.c_int])]:
    f = getattr(lib, name)
    f.restype, f.argtypes = res, args
api = C.pythonapi
api.PyCapsule_New.restype, api.PyCapsule_New.argtypes = C.py_object, [P, C.c_char_p, P]
api.PyCapsule_GetPointer.restype, api.PyCapsule_GetPointer.argtypes = P, [C.py_object, C.c_char_p]
api.PyCapsule_SetName.restype, api.PyCapsule_SetName.argtypes = C.c_int, [C.py_object, C.c_char_p]
NAMES = {True: b"dltensor_versioned", False: b"dltensor"}
USED = {True: b"used_dltensor_versioned", False: b"used_dltensor"}


keep = []  # ctypes callbacks must outlive the C that calls them


class Exported:
    """A tendo tensor behind the Python DLPack protocol; form 'versioned'
    answers a max_version >= 1 with a versioned capsule, 'legacy' never."""

    def __init__(self, t, form):
        self.t, self.form, self.used = t, form, None

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        versioned = self.form == "versioned" and max_version is not None and max_version[0] >= 1
        p = (lib.tendo_to_dlpack_versioned if versioned else lib.tendo_to_dlpack)(self.t)
        m = (Versioned if versioned else Legacy).from_address(p)
        self.m, self.used, self.index = m, "versioned" if versioned else "legacy", len(counts)
        counts.append(0)
        inner = DELETER(m.deleter)

        def counting(self_ptr, i=self.index, inner=inner, counts=counts):
            counts[i] += 1
            inner(self_ptr)
        cb = DELETER(counting)
        keep.append(cb)
        m.deleter = C.cast(cb, P).value
        return api.PyCapsule_New(p, NAMES[versioned], capsule_destructor)


cpu = lib.tendo_cpu()
baseline = lib.tendo_pool_get_stats(cpu).bytes_in_use
f32_bits = np.array([0x3f800000, 0x80000000, 0x7f800000, 0x00000001, 0x7fc00123, 0xc2f6e979], np.uint32)
f16_bits = np.array([0x3c00, 0x8000, 0x7c00, 0x0001, 0x7e01, 0xfbff], np.uint16)
shape = (C.c_int64 * 2)(2, 3)


def tendo_tensor(kind):
    """A new tendo tensor and the numpy array it should read as."""
    if kind == "f16":
        t = lib.tensor_f16_from_data(f16_bits.ctypes.data, 2, shape, cpu)
        return t, f16_bits.view(np.float16).reshape(2, 3)
    a = lib.tensor_f32_from_data(f32_bits.ctypes.data, 2, shape, cpu)
    want = f32_bits.view(np.float32).reshape(2, 3)
    if kind == "f32":
        return a, want
    t = lib.tensor_f32_transpose(a, 0, 1)
    lib.tendo_tensor_free(a)  # the view keeps the storage
    return t, want.T


wants_versioned = False
forms = ["versioned", "legacy"]
for form in forms:
    for kind in ["f32", "f16", "f32 transposed"]:
        t, want = tendo_tensor(kind)
        x = Exported(t, form)
        what = "%s, %s offered" % (kind, form)
        try:
            arr = np.from_dlpack(x)
        except Exception as e:
            for i in range(4):
                report(False, "%s: from_dlpack raised %r" % (what, e))
            lib.tendo_tensor_free(t)
            continue
        if form == "versioned":
            wants_versioned = x.used == "versioned"
        what = "%s, %s offered (numpy took %s)" % (kind, form, x.used)
        data, item = lib.tendo_tensor_data(t), want.itemsize
        strides = tuple(lib.tendo_tensor_stride(t)[i] * item for i in range(2))
        report(arr.dtype == want.dtype and arr.shape == want.shape and arr.tobytes() == want.tobytes(),
               what + ": numpy sees the same values, bit for bit (NaN payload, -0, inf, subnormals)")
        # numpy makes arrays from legacy capsules read-only whatever the
        # producer says; a versioned capsule without the flag is writable
        writable = x.used == "versioned"
        report(arr.ctypes.data == data and arr.strides == strides and arr.flags.writeable == writable,
               what + ": at tendo's address with tendo's strides %s, %s (no copy)"
               % (strides, "writable" if writable else "read-only as numpy does for legacy capsules"))
        forty_two = np.array(42, want.dtype)
        if writable:
            arr[0, 0] = forty_two
            report(C.string_at(data, item) == forty_two.tobytes(),
                   what + ": a write through numpy lands in tendo's tensor")
        else:
            C.memmove(data, forty_two.ctypes.data, item)
            report(arr[0, 0].tobytes() == forty_two.tobytes(), what + ": a write to tendo's tensor shows in numpy")
        lib.tendo_tensor_free(t)  # the export holds its own reference
        before = counts[x.index]
        good = arr[1, 1] == want[1, 1] or (np.isnan(arr[1, 1]) and np.isnan(want[1, 1]))
        del arr
        gc.collect()
        report(before == 0 and counts[x.index] == 1 and good,
               what + ": the deleter runs once, when the array dies (%d before, %d after)"
               % (before, counts[x.index]))

# a 0-d tensor, and an empty one (exported with data NULL, as DLPack asks)
for form in forms:
    for kind in ["0-d", "empty [0,3]"]:
        if kind == "0-d":
            t, want = lib.tensor_f32_full(0, None, 7.5, cpu), np.array(7.5, np.float32)
        else:
            t, want = lib.tensor_f32_zeros(2, (C.c_int64 * 2)(0, 3), cpu), np.zeros((0, 3), np.float32)
        x = Exported(t, form)
        try:
            arr = np.from_dlpack(x)
            good = arr.dtype == want.dtype and arr.shape == want.shape and arr.tobytes() == want.tobytes()
            good = good and (kind != "0-d" or arr.ctypes.data == lib.tendo_tensor_data(t))
            del arr
        except Exception as e:
            good, kind = False, "%s (%r)" % (kind, e)
        lib.tendo_tensor_free(t)
        gc.collect()
        report(good and counts[x.index] == 1,
               "%s f32, %s offered: numpy reads it (no copy) and the deleter runs once (%d)"
               % (kind, form, counts[x.index]))

# numpy has no bfloat16: it refuses, and the tensor is still deleted once
t = lib.tensor_bf16_from_data(f16_bits.ctypes.data, 2, shape, cpu)
for form in forms:
    x = Exported(t, form)
    try:
        np.from_dlpack(x)
        raised = None
    except Exception as e:
        raised = e
    gc.collect()
    report(raised is not None and counts[x.index] == 1,
           "bf16 (kDLBfloat), %s offered: numpy refuses it (%s) and the deleter still runs once (%d)"
           % (form, type(raised).__name__, counts[x.index]))
lib.tendo_tensor_free(t)

# the other way: tendo imports numpy's exports
a = np.arange(12, dtype=np.float32).reshape(3, 4)
for versioned in [True, False]:
    for view, vname in [(a, "[3,4]"), (a.T, "transposed"), (a[1:, ::2], "sliced [1:, ::2]")]:
        what = "tendo imports numpy's %s %s export" % (vname, "versioned" if versioned else "legacy")
        if versioned and not wants_versioned:
            report(True, what + " # SKIP this numpy has no versioned DLPack")
            report(True, what + " # SKIP this numpy has no versioned DLPack")
            continue
        refs = sys.getrefcount(view)
        cap = view.__dlpack__(max_version=(1, 0)) if versioned else view.__dlpack__()
        p = api.PyCapsule_GetPointer(cap, NAMES[versioned])
        e = (lib.tendo_from_dlpack_versioned if versioned else lib.tendo_from_dlpack)(p)
        if e:
            api.PyCapsule_SetName(cap, USED[versioned])  # tendo owns it now
        del cap
        strides = tuple(lib.tendo_tensor_stride(e)[i] * 4 for i in range(2)) if e else None
        report(e is not None and lib.tendo_tensor_data(e) == view.ctypes.data and strides == view.strides,
               what + ": numpy's address and strides %s" % (strides,))
        held = sys.getrefcount(view) > refs
        lib.tendo_tensor_free(e)
        gc.collect()
        report(held and sys.getrefcount(view) == refs,
               what + ": holds numpy's array until freed, then lets go (deleter called)")

ro = a.copy()
ro.flags.writeable = False
if wants_versioned:
    refs = sys.getrefcount(ro)
    cap = ro.__dlpack__(max_version=(1, 0))
    p = api.PyCapsule_GetPointer(cap, NAMES[True])
    flags = Versioned.from_address(p).flags
    e = lib.tendo_from_dlpack_versioned(p)
    err = lib.tendo_last_error()
    msg = lib.tendo_error_message(err).decode()
    report(not e and flags & 1 and lib.tendo_error_status(err) == 10 and "read-only" in msg,
           "a read-only numpy array (DLPACK_FLAG_BITMASK_READ_ONLY) is refused: " + msg)
    del cap  # not consumed: numpy's capsule deletes it
    gc.collect()
    report(sys.getrefcount(ro) == refs, "  and the refused tensor is still numpy's to delete (it did)")
else:
    report(True, "read-only arrays # SKIP this numpy has no versioned DLPack")
    report(True, "read-only arrays # SKIP this numpy has no versioned DLPack")

# integers, bool and f64 (kDLInt 0, kDLUInt 1, kDLBool 6, kDLFloat 64):
# numpy's legacy export imports as the tendo dtype, and tendo's export of
# that tensor reads in numpy as the same array
for npdt, name in [(np.int8, "i8"), (np.int16, "i16"), (np.int32, "i32"), (np.int64, "i64"),
                   (np.uint8, "u8"), (np.bool_, "bool"), (np.float64, "f64")]:
    what = "%s (numpy %s)" % (name, np.dtype(npdt).name)
    if npdt is np.bool_:
        src = np.array([[True, False, True], [False, False, True]])
    elif npdt is np.float64:
        src = np.array([[1e300, -0.0, 2.5], [np.inf, 5e-324, -7]])
    else:
        info = np.iinfo(npdt)
        src = np.array([[info.min, info.max, 0], [-1 if info.min else 1, 42, info.max - 1]], npdt)
    try:
        cap = src.__dlpack__()
    except Exception as e:  # numpy before 1.25 exports no bool
        report(True, "%s: numpy exports it # SKIP numpy %s: %r" % (what, np.__version__, e))
        report(True, "%s: numpy reads tendo's export # SKIP" % what)
        continue
    p = api.PyCapsule_GetPointer(cap, NAMES[False])
    e = lib.tendo_from_dlpack(p)
    if e:
        api.PyCapsule_SetName(cap, USED[False])
    del cap
    got = lib.tendo_dtype_name(lib.tendo_tensor_dtype(e)).decode() if e else None
    if not e and name not in ("i64", "bool") and b"not one this build" in lib.tendo_error_message(lib.tendo_last_error()):
        report(True, "%s # SKIP not in this build" % what)
        report(True, "%s # SKIP not in this build" % what)
        continue
    report(e is not None and got == name and lib.tendo_tensor_data(e) == src.ctypes.data,
           "%s: numpy's export imports as tendo %s, in place" % (what, got))
    if not e:
        report(False, "%s: numpy reads tendo's export (import failed)" % what)
        continue
    x = Exported(e, "legacy")
    try:
        arr = np.from_dlpack(x)
        good = arr.dtype == src.dtype and arr.shape == src.shape and arr.tobytes() == src.tobytes()
        del arr
    except Exception as ex:
        good, what = False, "%s (%r)" % (what, ex)
    lib.tendo_tensor_free(e)
    gc.collect()
    report(good and counts[x.index] == 1, "%s: tendo's export reads in numpy as the same array, bit for bit" % what)

gc.collect()
report(lib.tendo_pool_get_stats(cpu).bytes_in_use == baseline, "all of tendo's memory came back to the pool")
PY

# shellcheck disable=SC2086 # $inc is several -I options
dtypes_h=$top_builddir/include/tendo/dtype.h
if [ -z "$pythons" ]; then
    skip_n "$NUMPY_TESTS" "no Python with numpy >= 1.23"
elif ! grep -q '^#define TENDO_HAVE_F16 1' "$dtypes_h" || ! grep -q '^#define TENDO_HAVE_BF16 1' "$dtypes_h"; then
    skip_n "$NUMPY_TESTS" "this build has no f16 or no bf16, which t.py exchanges with numpy (--enable-dtypes)"
elif [ -z "$lib" ]; then
    skip_n "$NUMPY_TESTS" "no shared libtendo to load (built with --disable-shared?)"
elif ! $CC -shared -fPIC $inc "$tmp/capsule.c" -o "$tmp/capsule.so" >"$tmp/capsule.err" 2>&1; then
    skip_n "$NUMPY_TESTS" "$CC cannot build a shared object: $(head -n 1 "$tmp/capsule.err")"
else
    for p in $pythons; do
        # a sanitizer build's library loads only with its runtime preloaded
        preload=
        if ! "$p" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$lib" >/dev/null 2>&1; then
            preload=$(ldd "$lib" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*libasan[^ ]*\) .*/\1/p' | head -n 1)
        fi
        if [ -n "$preload" ]; then
            run() { LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 "$@"; }
        else
            run() { "$@"; }
        fi
        if ! run "$p" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$lib" >/dev/null 2>&1; then
            skip_n "$NUMPY_TESTS" "$p cannot load $lib"
            continue
        fi
        run "$p" "$tmp/t.py" "$lib" "$tmp/capsule.so" >"$tmp/py.out" 2>"$tmp/py.err"
        st=$?
        cat "$tmp/py.out" >>"$results"
        got=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/py.out")
        if [ "$st" -ne 0 ] || [ "$got" -ne "$NUMPY_TESTS" ]; then
            fail "$p ran t.py to the end (status $st, $got of $NUMPY_TESTS results)"
            sed 's/^/# /' "$tmp/py.err" >>"$results"
        else
            pass "$p ran t.py to the end"
        fi
    done
fi

awk '/^ok /{ n++; sub(/^ok/, "ok " n) }
     /^not ok /{ n++; sub(/^not ok/, "not ok " n) }
     { print }
     END { print "1.." n }' "$results"
