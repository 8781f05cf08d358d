#!/usr/bin/python3
"""t/data/print-cases.py - writes t/data/print-cases.h, the expected output of t/t-print.

Each case is a float32 or float16 array, stored as exact bit patterns, with
numpy's str() of it: tendo__print_values must write that text followed by a
newline.  Run with a Python that has numpy (the expected strings in the
checked-in header come from Debian's numpy 1.24):

    /usr/bin/python3 t/data/print-cases.py > t/data/print-cases.h

The output is deterministic (fixed random seed).
"""

import sys

import numpy as np

F32, F16 = np.float32, np.float16


def cases():
    """Yields (name, array) pairs."""
    rng = np.random.default_rng(20240501)
    a = np.array

    # 1-D basics
    yield "f32 integer values", a([0, 1, 2], F32)
    yield "f32 0.1 0.2 0.3 (shortest digits)", a([0.1, 0.2, 0.3], F32)
    yield "f16 0.1 0.2 0.3 (shortest digits)", a([0.1, 0.2, 0.3], F16)
    yield "f32 fraction lengths padded with spaces", a([1.5, 2.25, -3.125, 10], F32)
    yield "f32 negatives", a([-1, -2.5, 3], F32)
    yield "f32 mixed magnitudes", a([1, 10, 100, 999.5], F32)
    yield "f32 pi multiples", (np.pi * np.arange(1, 6)).astype(F32)
    yield "f32 thirds", a([1 / 3, 2 / 3, -1 / 3], F32)
    yield "f16 pi e sqrt2", a([np.pi, np.e, np.sqrt(2)], F16)
    yield "f16 halves", np.arange(-2, 2, 0.5).astype(F16)
    yield "f32 cut at 8 fraction digits", a([0.0012345678, 1.0], F32)
    yield "f32 ties at the 8th fraction digit", a([2.0**-9, 3 * 2.0**-9, 1], F32)
    yield "f32 all zeros", np.zeros(5, F32)
    yield "f32 negative zero", a([-0.0, 0.0, 1.0], F32)
    yield "f32 only negative zero", a([-0.0], F32)

    # choice of scientific notation
    yield "f32 sci: small value", a([1e-5, 1, 2], F32)
    yield "f32 sci: large value", a([1e10, 1], F32)
    yield "f32 sci: 1e8 is large", a([1e8, 1], F32)
    yield "f32 positional: 99999992 < 1e8", a([99999992], F32)
    yield "f32 positional: integer digits are exact", a([99999992, 100000], F32)
    yield "f32 sci: f32(1e-4) < 1e-4", a([1e-4], F32)
    yield "f16 positional: f16(1e-4) >= 1e-4", a([1e-4], F16)
    yield "f32 positional: ratio exactly 1000", a([1, 1000], F32)
    yield "f32 sci: ratio just over 1000", a([1, 1000.0001], F32)
    yield "f32 ratio computed in f32", a([0.001, 1.0], F32)
    yield "f32 sci: digits padded with exact digits", a([0.1, 1.2345678e-5], F32)
    yield "f32 sci: negatives", a([-1e-5, 2.5e10, -3], F32)
    yield "f32 sci: zero", a([0, 1.5e-5], F32)
    yield "f32 sci: subnormals", a([1e-45, 1e-38, 1], F32)
    yield "f32 sci: max", a([3.4028235e38, -1], F32)
    yield "f32 sci: exp-distributed", np.exp(rng.uniform(-20, 20, 10)).astype(F32)
    yield "f16 sci: max and subnormal", a([65504, 6e-8], F16)
    yield "f16 sci: tiny", a([1e-5, 2e-5, 3.5e-6], F16)
    yield "f16 exact integers above 2048", a([33984, 100], F16)
    yield "f16 sci: unique digits above 2048", a([33984, 1], F16)
    yield "f16 integers round to even", a([2049, 4097, 65000], F16)

    # non-finite values
    yield "f32 nan inf -inf", a([np.nan, np.inf, -np.inf, 1.5], F32)
    yield "f32 nan only", a([np.nan], F32)
    yield "f32 inf and -inf only", a([np.inf, -np.inf], F32)
    yield "f32 nan with sci", a([np.nan, 1e-5, -np.inf], F32)
    yield "f16 nan inf and wide values", a([np.nan, np.inf, 1234.5, -0.25], F16)

    # several dimensions
    yield "f32 2-D arange", np.arange(12, dtype=F32).reshape(3, 4)
    yield "f32 2-D negatives", a([[-1.5, 2, 3.25], [4, -5, 6]], F32)
    yield "f32 2-D sci", a([[1e-7, 2], [3e9, -4]], F32)
    yield "f32 3-D blank lines between blocks", (np.arange(30, dtype=F32) * 1.5).reshape(2, 3, 5)
    yield "f32 4-D", np.arange(24, dtype=F32).reshape(2, 2, 2, 3) - 10
    yield "f16 3-D", (np.arange(12) / 8).astype(F16).reshape(2, 2, 3)
    yield "f32 size-1 dims (1,)", a([7.5], F32)
    yield "f32 size-1 dims (1,1)", a([[7.5]], F32)
    yield "f32 size-1 dims (1,3)", a([[1, 2, 3]], F32)
    yield "f32 size-1 dims (3,1)", a([[1], [2], [3]], F32)
    yield "f32 size-1 dims (1,1,1)", a([[[-2]]], F32)
    yield "f32 size-1 dims (1,2,1)", a([[[1], [2]]], F32)
    yield "f32 random normal", rng.standard_normal(20).astype(F32)
    yield "f16 random uniform 2-D", rng.uniform(-10, 10, (4, 5)).astype(F16)

    # line wrapping at 75 columns
    yield "f32 1-D wraps", np.linspace(0, 1, 30).astype(F32)
    yield "f32 1-D arange wraps", (np.arange(40) * 1.1).astype(F32)
    for n in (12, 13, 14, 15, 16):
        yield "f32 1-D near the line width, n=%d" % n, (np.arange(n) + 1000.25).astype(F32)
    yield "f32 2-D rows wrap", rng.standard_normal((3, 20)).astype(F32)
    yield "f32 3-D rows wrap", rng.standard_normal((2, 2, 15)).astype(F32)
    yield "f32 4-D rows wrap", rng.uniform(0, 100, (2, 1, 2, 13)).astype(F32)
    yield "f32 sci rows wrap", (rng.standard_normal((2, 9)) * 1e12).astype(F32)
    yield "f32 1000 elements are not summarized", np.arange(1000, dtype=F32)

    # summarized (more than 1000 elements)
    yield "f32 summarized 1-D arange(1001)", np.arange(1001, dtype=F32)
    yield "f32 summarized 1-D random", rng.standard_normal(1100).astype(F32)
    yield "f16 summarized 1-D", np.arange(1100).astype(F16)
    yield "f32 summarized 2-D 40x40", np.arange(1600, dtype=F32).reshape(40, 40)
    yield "f32 summarized 2-D 3x340", np.arange(1020, dtype=F32).reshape(3, 340) / 4
    yield "f32 summarized 2-D 340x3", np.arange(1020, dtype=F32).reshape(340, 3) / 4
    yield "f32 summarized 3-D 11x11x11", np.arange(1331, dtype=F32).reshape(11, 11, 11)
    yield "f32 summarized 3-D 2x3x170", np.arange(1020, dtype=F32).reshape(2, 3, 170) - 510
    yield "f32 summarized 4-D 7x7x7x3", np.arange(1029, dtype=F32).reshape(7, 7, 7, 3)
    yield "f32 summarized, no axis longer than 6", np.arange(1080, dtype=F32).reshape(6, 6, 6, 5) / 2
    x = np.arange(1010, dtype=F32)
    x[0], x[-1] = np.nan, -np.inf
    yield "f32 summarized with nan and -inf", x
    yield "f32 summarized sci", (rng.standard_normal(1010) * 1e9).astype(F32)
    x = np.arange(1010, dtype=F32) + 10
    x[505] = 1e20
    yield "f32 summarized: elided values do not count", x

    # empty and 0-d
    yield "f32 empty (0,)", np.zeros(0, F32)
    yield "f32 empty (2,0)", np.zeros((2, 0), F32)
    yield "f32 empty (0,3)", np.zeros((0, 3), F32)
    yield "f32 empty (2,0,3)", np.zeros((2, 0, 3), F32)
    yield "f16 empty (0,)", np.zeros(0, F16)
    scalars = [
        (F32, 1.5), (F32, 0.1), (F16, 0.1), (F32, 1e20), (F32, 1e-5),
        (F32, 1e-4), (F16, 1e-4), (F32, -0.0), (F32, 0.0), (F32, np.nan),
        (F32, np.inf), (F32, -np.inf), (F32, 1e16), (F32, 9.9e15),
        (F32, 123456.79), (F32, 1.0), (F16, 33984), (F16, 65504),
        (F16, 6e-8), (F32, 3.4028235e38), (F32, -2.5e-7), (F16, -1.5),
    ]
    for dt, v in scalars:
        yield "%s 0-d %r" % ("f32" if dt is F32 else "f16", v), a(v, dt)


def int_cases():
    """Yields (name, array) pairs of integer and bool arrays."""
    a = np.array
    yield "i64 small", a([0, 1, 2], np.int64)
    yield "i64 negatives set the width", a([-5, 10, 300], np.int64)
    yield "i64 past 2^53, exact", a([2**53 + 1, -(2**63), 2**63 - 1], np.int64)
    yield "u8 0 and 255", a([0, 255, 7], np.uint8)
    yield "i8 2-D", a([[-128, 0, 1], [127, -1, 5]], np.int8)
    yield "i16 3-D", (np.arange(24, dtype=np.int16) - 12).reshape(2, 3, 4)
    yield "i32 rows wrap", (np.arange(60, dtype=np.int32) * 1000 - 30000).reshape(3, 20)
    yield "i64 1-D wraps", np.arange(100, dtype=np.int64) * 12345
    yield "i64 summarized 1-D", np.arange(2000, dtype=np.int64) - 1000
    yield "i32 summarized 2-D", np.arange(1600, dtype=np.int32).reshape(40, 40)
    x = np.arange(1010, dtype=np.int64)
    x[505] = -(10**15)
    yield "i64 summarized: elided values do not count", x
    yield "i64 empty (0,)", np.zeros(0, np.int64)
    yield "i32 empty (2,0)", np.zeros((2, 0), np.int32)
    yield "bool 1-D", a([True, False, True], bool)
    yield "bool all false", a([False, False], bool)
    yield "bool 2-D", a([[True, False], [False, True], [True, True]], bool)
    yield "bool wraps", np.arange(40) % 3 == 0
    yield "bool summarized", np.arange(1100) % 2 == 0
    yield "bool empty", np.zeros(0, bool)
    for v in (0, -7, 2**53 + 1, -(2**63)):
        yield "i64 0-d %d" % v, a(v, np.int64)
    yield "u8 0-d 255", a(255, np.uint8)
    yield "bool 0-d True", a(True)
    yield "bool 0-d False", a(False)


def c_string(s, indent):
    """s as C string literals, one per line of s, to be concatenated."""
    parts = s.splitlines(keepends=True) or [""]
    esc = ['"' + p.replace("\\", "\\\\").replace('"', '\\"')
           .replace("\n", "\\n") + '"' for p in parts]
    return ("\n" + indent).join(esc)


def c_bits(name, arr):
    """A C array of arr's bit patterns, row-major."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    if arr.dtype == F32:
        ctype, bits, width, per_row = "uint32_t", flat.view(np.uint32), 8, 6
    else:
        ctype, bits, width, per_row = "uint16_t", flat.view(np.uint16), 4, 9
    words = ["0x%0*x" % (width, b) for b in bits]
    rows = [", ".join(words[i:i + per_row])
            for i in range(0, len(words), per_row)]
    return "static const %s %s[] = {\n    %s\n};\n" % (ctype, name, ",\n    ".join(rows))


def main():
    out = sys.stdout
    out.write("/* generated by t/data/print-cases.py, do not edit */\n")
    out.write("/* t/data/print-cases.h - numpy %s's str() of float32 and float16 arrays,\n"
              " * the expected output of tendo__print_values (t/drivers/t-print.c). */\n"
              % np.__version__)
    out.write("#ifndef TENDO_T_PRINT_CASES_H\n#define TENDO_T_PRINT_CASES_H\n\n")
    out.write("#include <stdint.h>\n\n")
    out.write("struct print_case {\n"
              "    const char *name;  /* what the case shows */\n"
              "    int dtype;         /* 32: float32, 16: float16 */\n"
              "    int ndim;\n"
              "    int64_t shape[8];\n"
              "    int64_t numel;\n"
              "    const void *bits;  /* uint32_t or uint16_t bit patterns, row-major */\n"
              "    const char *want;  /* numpy's str(a) and a newline */\n"
              "};\n\n")
    entries = []
    for i, (name, arr) in enumerate(cases()):
        assert arr.ndim <= 8 and arr.dtype in (F32, F16)
        bits = "NULL"
        if arr.size:
            bits = "print_bits_%d" % i
            out.write(c_bits(bits, arr))
        shape = ", ".join(str(n) for n in arr.shape) or "0"
        want = str(arr) + "\n"
        entries.append('    {"%s", %d, %d, {%s}, %d, %s,\n     %s},\n' % (
            name, 32 if arr.dtype == F32 else 16, arr.ndim, shape, arr.size,
            bits, c_string(want, "     ")))
    out.write("\nstatic const struct print_case print_cases[] = {\n")
    out.writelines(entries)
    out.write("};\n\n")

    # integers and bools: the values themselves, as int64 (exact)
    out.write("struct print_int_case {\n"
              "    const char *name;\n"
              "    int is_bool;       /* numpy's BoolFormat, else IntegerFormat */\n"
              "    int ndim;\n"
              "    int64_t shape[8];\n"
              "    int64_t numel;\n"
              "    const int64_t *vals; /* row-major */\n"
              "    const char *want;  /* numpy's str(a) and a newline */\n"
              "};\n\n")
    entries = []
    for i, (name, arr) in enumerate(int_cases()):
        vals = "NULL"
        if arr.size:
            vals = "print_ints_%d" % i
            flat = [int(v) for v in np.ascontiguousarray(arr).reshape(-1)]
            words = ["INT64_C(%d)" % v if v != -(2**63) else "INT64_MIN" for v in flat]
            rows = [", ".join(words[k:k + 6]) for k in range(0, len(words), 6)]
            out.write("static const int64_t %s[] = {\n    %s\n};\n" % (vals, ",\n    ".join(rows)))
        shape = ", ".join(str(n) for n in arr.shape) or "0"
        want = str(arr) + "\n"
        entries.append('    {"%s", %d, %d, {%s}, %d, %s,\n     %s},\n' % (
            name, arr.dtype == bool, arr.ndim, shape, arr.size, vals, c_string(want, "     ")))
    out.write("\nstatic const struct print_int_case print_int_cases[] = {\n")
    out.writelines(entries)
    out.write("};\n\n")

    # A virtual float32 tensor of 10^12 elements whose [i, j] is j: only the
    # corners are read, so numpy prints it from a broadcast view.
    n = 1000000
    virt = np.broadcast_to(np.arange(n, dtype=F32), (n, n))
    out.write("/* shape (%d, %d) float32, element [i, j] = j */\n" % (n, n))
    out.write("#define PRINT_VIRTUAL_N %d\n" % n)
    out.write("#define PRINT_VIRTUAL_WANT \\\n    %s\n\n"
              % c_string(str(virt) + "\n", "    ").replace("\n    ", " \\\n    "))
    out.write("#endif /* TENDO_T_PRINT_CASES_H */\n")


if __name__ == "__main__":
    main()
