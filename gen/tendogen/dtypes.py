"""The dtype table (gen/dtypes.toml): one Dtype per entry, its fields
validated and the ones its kind implies filled in; the accumulation types
that have CPU kernels; API.md's cast rules as C expressions."""

import dataclasses
import re
import tomllib

from . import GenError

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

KINDS = ("float", "int", "uint", "bool")
# Which dtypes a `kinds` list names: "all", "numeric" and "integer" stand for several.
KIND_GROUPS = {"all": KINDS, "numeric": ("float", "int", "uint"), "integer": ("int", "uint")}


def parse_kinds(v, where):
    """A `kinds` list of the tables: kind names or group names."""
    if not (isinstance(v, list) and v and all(isinstance(k, str) for k in v)):
        raise GenError(f"{where}: kinds: want a list such as [\"float\", \"int\"]")
    out = set()
    for k in v:
        if k in KIND_GROUPS:
            out |= set(KIND_GROUPS[k])
        elif k in KINDS:
            out.add(k)
        else:
            raise GenError(f"{where}: kinds: '{k}' is none of {', '.join(KINDS + tuple(KIND_GROUPS))}")
    return tuple(k for k in KINDS if k in out)


@dataclasses.dataclass(frozen=True)
class Accum:
    """An accumulation type with CPU kernels (templates/cpu/*.c.j2 render
    once per accumulation type, as src/gen/cpu_<part>_<name>.c); prints as
    its short name."""
    name: str       # float, double, int64, uint64
    c_type: str
    enum: str       # its tendo__compute value (src/core/traits.h)
    kinds: tuple    # the kinds of dtype that may accumulate in it
    lowest: str     # C constants: the least and the largest value (identities of max and min)
    highest: str

    def __str__(self):
        return self.name

    @property
    def is_float(self):
        """A floating-point accumulator: NaN exists, results round."""
        return self.c_type in ("float", "double")

    @property
    def signed(self):
        return self.c_type != "uint64_t"

    @property
    def key_type(self):
        """The unsigned type sort keys of this accumulator take."""
        return "uint32_t" if self.c_type == "float" else "uint64_t"


ACCUMS = (
    Accum("float", "float", "TENDO__COMPUTE_FLOAT", ("float",), "-INFINITY", "INFINITY"),
    Accum("double", "double", "TENDO__COMPUTE_DOUBLE", ("float",), "-INFINITY", "INFINITY"),
    Accum("int64", "int64_t", "TENDO__COMPUTE_INT64", ("int", "uint", "bool"), "INT64_MIN", "INT64_MAX"),
    Accum("uint64", "uint64_t", "TENDO__COMPUTE_UINT64", ("uint", "bool"), "0", "UINT64_MAX"),
)
ACCUM_BY_CTYPE = {a.c_type: a for a in ACCUMS}


def _subst_x(template, expr):
    # the conversion templates name their argument x, always as "(x)"
    if "(x)" not in template:
        raise GenError(f"conversion {template!r} must use its argument as (x)")
    return template.replace("(x)", f"({expr})")


def float_suffix(expr, c_type):
    """expr with {f} spelled for c_type: "f" for float (expf, tendo__reluf),
    nothing for double and the integers (exp, tendo__relu)."""
    return expr.replace("{f}", "f" if c_type == "float" else "")


@dataclasses.dataclass(frozen=True)
class Dtype:
    name: str
    code: int
    kind: str
    c_type: str
    bits_type: str
    size: int
    mantissa_bits: int
    compute_type: str
    accum_type: str
    to_compute: str
    from_compute: str
    from_double: str
    widen_run: str
    narrow_run: str
    add_run: str
    cuda_type: str
    cuda_to_compute: str
    cuda_from_compute: str
    cuda_data_type: str
    dlpack_code: int
    safetensors: str
    numpy: str

    @property
    def NAME(self):
        return self.name.upper()

    @property
    def tensor(self):
        return f"tensor_{self.name}"

    @property
    def state_dtype(self):
        """The dtype of a float dtype's optimizer state (the `state` param
        kind): the one its accumulation type is, f32 or f64."""
        return {"float": "f32", "double": "f64"}.get(self.accum_type, "")

    @property
    def enum(self):
        return f"TENDO_{self.NAME}"

    @property
    def own_compute(self):
        """Whether elementwise ops compute on the elements themselves, with
        no conversion (f32, f64, the integers, bool)."""
        return self.c_type == self.compute_type

    @property
    def own_accum(self):
        """Whether the elements already are the accumulation type: the
        reduction kernels read and write them in place."""
        return self.c_type == self.accum_type

    @property
    def accum(self):
        """The Accum its reductions accumulate in."""
        return ACCUM_BY_CTYPE[self.accum_type]

    @property
    def ct(self):
        """The short name of the accumulation type (file names, symbols)."""
        return self.accum.name

    @property
    def bits(self):
        return self.size * 8

    @property
    def is_float(self):
        """A floating-point format: it rounds, and has NaN (casts and
        printing treat it as a real number)."""
        return self.kind == "float"

    @property
    def is_integer(self):
        """A signed or unsigned integer (not bool): conversions into it saturate."""
        return self.kind in ("int", "uint")

    @property
    def is_bool(self):
        return self.kind == "bool"

    @property
    def signed(self):
        return self.kind in ("float", "int")

    @property
    def wrap_type(self):
        """Integers: the unsigned type arithmetic is done in so that it
        wraps and never overflows (no integer promotion to int first)."""
        return "uint64_t" if self.size > 4 else "uint32_t"

    @property
    def int_min(self):
        """Integers: the least value, as a C constant expression."""
        if self.kind != "int":
            return "0"
        return f"(({self.c_type})(-{2 ** (self.bits - 1) - 1}LL - 1))"

    @property
    def int_max(self):
        if self.kind == "int":
            return f"(({self.c_type}){2 ** (self.bits - 1) - 1}LL)"
        return f"(({self.c_type}){2 ** self.bits - 1}ULL)"

    @property
    def sat_bounds(self):
        """Integers: (lo, hi) as C double literals: a value below lo gives
        the least value, one at or above hi the largest; in between, the
        truncation is in range (lo = -2^(bits-1) or 0, hi = 2^(bits-1) or 2^bits)."""
        if self.kind == "int":
            return (f"-0x1p{self.bits - 1}", f"0x1p{self.bits - 1}")
        return ("0.0", f"0x1p{self.bits}")

    @property
    def scan_acc(self):
        """What cumsum accumulates in: double for a float, wrapping 64-bit
        unsigned for the integers and bool."""
        return "double" if self.is_float else "uint64_t"

    @property
    def scan_round(self):
        """What each prefix of cumsum is rounded to before it is stored:
        the compute type of a float, int64_t (the i64 result) otherwise."""
        return self.compute_type if self.is_float else "int64_t"

    def widen(self, expr):
        """C expression: element `expr` widened to the compute type."""
        return _subst_x(self.to_compute, expr)

    def narrow(self, expr):
        """C expression: compute-type `expr` rounded once to the element type."""
        return _subst_x(self.from_compute, expr)

    def narrow_double(self, expr):
        """C expression: double `expr` converted to the element type (rounded
        once; an integer truncated and saturated; bool: != 0)."""
        return _subst_x(self.from_double, expr)

    def compute_from_double(self, expr):
        """C expression: double `expr` as a scalar operand in the compute
        type: a float rounds, an integer saturates (API.md's cast rule),
        bool is != 0."""
        return f"(({self.compute_type})({expr}))" if self.is_float else self.narrow_double(expr)

    def to_double(self, expr):
        """C expression: element `expr` as a double (exact but for 64-bit integers past 2^53)."""
        return f"((double){self.widen(expr)})"

    def cuda_widen(self, expr):
        """CUDA expression: element `expr` (of cuda_type) widened to the compute type."""
        return _subst_x(self.cuda_to_compute, expr)

    def cuda_narrow(self, expr):
        """CUDA expression: compute-type `expr` rounded once to cuda_type."""
        return _subst_x(self.cuda_from_compute, expr)


def cast(src, dst, expr):
    """C expression: element `expr` of dtype src converted to dtype dst by
    API.md's rules: float -> float rounds once; float -> integer truncates,
    saturates, NaN -> 0; integer -> integer wraps; integer -> float rounds
    once; anything -> bool is != 0 (NaN is true); bool -> anything 0 or 1."""
    if src.name == dst.name:
        return f"({expr})"
    if dst.is_bool:
        return f"({src.widen(expr)} != 0)"
    if src.is_bool:
        return dst.narrow_double(f"({expr}) ? 1.0 : 0.0") if dst.is_float else f"(({dst.c_type})({expr}))"
    if src.is_float:
        if dst.is_float:
            if src.compute_type == "float" and dst.compute_type == "float":
                return dst.narrow(src.widen(expr))
            return dst.narrow_double(src.to_double(expr))
        if src.compute_type == "float":  # saturating truncation of a float
            return f"tendo__satf_{dst.name}({src.widen(expr)})"
        return f"tendo__sat_{dst.name}({src.to_double(expr)})"
    if not dst.is_float:  # integer -> integer: modulo 2^bits
        return f"(({dst.c_type})({dst.wrap_type})(uint64_t)({expr}))"
    if dst.c_type in ("float", "double"):  # the C conversion rounds once
        return f"(({dst.c_type})({expr}))"
    if src.size < 8:  # exact in double, then rounded once
        return dst.narrow_double(f"(double)({expr})")
    # 64-bit integers: round to odd into double, so that the one rounding to
    # a narrower float is the only one that counts
    if src.kind == "uint":
        return dst.narrow_double(f"tendo__u64_to_f64_odd((uint64_t)({expr}))")
    return dst.narrow_double(f"tendo__i64_to_f64_odd((int64_t)({expr}))")


# What a dtype entry may leave out, whatever its kind (see docs/registry.md).
DTYPE_DEFAULTS = {"bits_type": "", "mantissa_bits": 0, "widen_run": "", "narrow_run": "", "add_run": "",
                  "to_compute": "(x)", "from_compute": "(x)", "cuda_data_type": ""}
# The default accumulation type of each kind that does not say.
KIND_ACCUM = {"int": "int64_t", "uint": "uint64_t", "bool": "int64_t"}


def _dtype_defaults(table):
    """table with the fields its kind implies filled in."""
    t = {**DTYPE_DEFAULTS, **table}
    kind, name = t.get("kind"), t.get("name")
    t.setdefault("compute_type", t.get("c_type"))
    if kind in KIND_ACCUM:
        t.setdefault("accum_type", KIND_ACCUM[kind])
        t.setdefault("from_double", "((x) != 0)" if kind == "bool" else f"tendo__sat_{name}(x)")
    # on a GPU the element is the C one unless cuda_type says otherwise (then
    # its two conversions must be given: load_dtypes says so)
    same = t.get("cuda_type") == t.get("c_type")
    t.setdefault("cuda_to_compute", t["to_compute"] if same else "")
    t.setdefault("cuda_from_compute", t["from_compute"] if same else "")
    return t


def load_dtypes(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    fields = {f.name: f.type for f in dataclasses.fields(Dtype)}
    out, names, codes, by_cuda = [], set(), set(), {}
    for i, table in enumerate(data.get("dtype", [])):
        where = f"{path}: dtype #{i + 1}"
        table = _dtype_defaults(table)
        require(table, fields, where)
        dt = Dtype(**table)
        where = f"{path}: dtype '{dt.name}'"
        if not IDENT.match(dt.name) or dt.name in names:
            raise GenError(f"{where}: name '{dt.name}' is not a fresh C identifier")
        if dt.code <= 0 or dt.code in codes:
            raise GenError(f"{where}: code {dt.code} must be positive and unique")
        if dt.kind not in KINDS:
            raise GenError(f"{where}: kind '{dt.kind}' is none of {', '.join(KINDS)}")
        for conv in ("to_compute", "from_compute", "from_double"):
            _subst_x(getattr(dt, conv), "v")
        if dt.accum_type not in ACCUM_BY_CTYPE:
            raise GenError(f"{where}: accum_type '{dt.accum_type}' has no kernels (the accumulation "
                           f"types with kernels are: {', '.join(ACCUM_BY_CTYPE)})")
        if dt.kind not in dt.accum.kinds:
            raise GenError(f"{where}: a {dt.kind} dtype cannot accumulate in {dt.accum_type}")
        if dt.kind != "float" and dt.size not in (1, 2, 4, 8):
            raise GenError(f"{where}: an integer dtype has 1, 2, 4 or 8 bytes")
        if dt.kind != "float" and not dt.own_compute:
            raise GenError(f"{where}: a {dt.kind} dtype computes in its own type ({dt.c_type})")
        if dt.kind == "float" and dt.mantissa_bits <= 0:
            raise GenError(f"{where}: a float dtype needs mantissa_bits")
        if dt.own_accum or dt.kind != "float":
            if dt.widen_run or dt.narrow_run:
                raise GenError(f"{where}: '{dt.name}' is read in an element loop ({dt.c_type} to "
                               f"{dt.accum_type}): widen_run and narrow_run must be empty")
        else:
            for field in ("widen_run", "narrow_run", "bits_type"):
                if not IDENT.match(getattr(dt, field)):
                    raise GenError(f"{where}: '{dt.name}' stores {dt.c_type} and computes in "
                                   f"{dt.accum_type}: {field} must name a C identifier")
        if dt.add_run and (dt.kind != "float" or dt.accum_type != "float" or not IDENT.match(dt.add_run)):
            raise GenError(f"{where}: add_run must name a C identifier, for a float dtype that computes "
                           f"in float (not {dt.kind} in {dt.accum_type})")
        if dt.own_compute and dt.bits_type:
            raise GenError(f"{where}: '{dt.name}' is its own compute type ({dt.c_type}): "
                           "bits_type must be empty")
        if not (dt.cuda_to_compute and dt.cuda_from_compute):
            raise GenError(f"{where}: its cuda_type {dt.cuda_type} is not its c_type {dt.c_type}: "
                           "cuda_to_compute and cuda_from_compute must say how a GPU converts it")
        for conv in ("cuda_to_compute", "cuda_from_compute"):
            _subst_x(getattr(dt, conv), "v")
        # one CUDA element type is one set of device overloads: dtypes that
        # share it must convert it alike
        same = by_cuda.get(dt.cuda_type)
        if same and (same.compute_type, same.cuda_to_compute, same.cuda_from_compute) != \
                (dt.compute_type, dt.cuda_to_compute, dt.cuda_from_compute):
            raise GenError(f"{where}: cuda_type {dt.cuda_type} is '{same.name}''s too, which computes "
                           "or converts it otherwise")
        by_cuda.setdefault(dt.cuda_type, dt)
        names.add(dt.name)
        codes.add(dt.code)
        out.append(dt)
    if not out:
        raise GenError(f"{path}: no [[dtype]] tables")
    return out


def require(table, fields, where):
    """Checks that table has exactly fields (name -> type), each of its type."""
    for name, typ in fields.items():
        if name not in table:
            raise GenError(f"{where}: missing field '{name}'")
        if not isinstance(table[name], typ):
            want = " or ".join(t.__name__ for t in typ) if isinstance(typ, tuple) else typ.__name__
            raise GenError(f"{where}: field '{name}' must be {want}")
    extra = set(table) - set(fields)
    if extra:
        raise GenError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")


# The dtypes every build has, and why.
REQUIRED_DTYPES = (("bool", "comparisons and masks are bool tensors"),
                   ("i64", "indices and integer sums are i64 tensors"),
                   ("f32", "it is the float the tendo program, the examples and the tests compute in"))


def select_dtypes(all_dtypes, spec):
    by_name = {d.name: d for d in all_dtypes}
    chosen = []
    for name in filter(None, (s.strip() for s in spec.split(","))):
        if name not in by_name:
            raise GenError(f"unknown dtype '{name}' (gen/dtypes.toml has: {', '.join(by_name)})")
        if by_name[name] not in chosen:
            chosen.append(by_name[name])
    if not chosen:
        raise GenError("no dtypes selected")
    for need, why in REQUIRED_DTYPES:
        if need in by_name and by_name[need] not in chosen:
            raise GenError(f"dtype '{need}' cannot be left out: {why}")
    # table order, not command-line order, so output never depends on the spelling
    return [d for d in all_dtypes if d in chosen]


def accums_of(dtypes):
    """The accumulation types the dtypes use, in ACCUMS order."""
    used = {d.accum_type for d in dtypes}
    return [a for a in ACCUMS if a.c_type in used]


def cuda_elements(dtypes):
    """One dtype per distinct CUDA element type (the device's overloads)."""
    seen, out = set(), []
    for d in dtypes:
        if d.cuda_type not in seen:
            seen.add(d.cuda_type)
            out.append(d)
    return out
