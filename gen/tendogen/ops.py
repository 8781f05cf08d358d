"""Op families: [[binary]], [[unary]] and [[reduction]] entries of
gen/registry/.  One entry is one op: its C expression (or a reduction's
identity, combine and finalize) in the compute or accumulation type, a
reference in double for the tests and their test inputs.  It expands into
its functions (<op>, <op>_out, <op>_scalar; a reduction's <op>(a, dim,
keepdim)) and its kernel; docs/registry.md documents the fields."""

import dataclasses

from . import GenError
from .dtypes import float_suffix, parse_kinds, require
from .model import Fn, Kernel, Param, expr_for
from .refs import check_ref

@dataclasses.dataclass(frozen=True)
class Tol:
    """A test tolerance in f32 ulps (2^-23); see docs/registry.md."""
    rel: float = 0.0    # of |want|
    abs: float = 0.0    # absolute (elementwise)
    abs_x: float = 0.0  # of the largest finite |operand| (elementwise)
    fold: float = 0.0   # of sum|x| per float addition an element goes through (reductions)


@dataclasses.dataclass(frozen=True)
class Op:
    kind: str           # binary, unary, reduction
    name: str
    group: str = ""
    kinds: tuple = ("float",)
    result: str = "same"       # same, bool; reductions also sum
    scalar: bool = True        # binary: also <op>_scalar
    out: bool = True           # binary/unary: also <op>_out
    expr: str = ""
    expr_int: str = ""
    expr_uint: str = ""
    expr_bool: str = ""
    combine_int: str = ""
    identity_int: str = ""
    vector: str = ""
    vector_f64: str = ""
    vector_times: str = ""     # binary: op(a, b) = a * vector_times(b), a unary f32 loop
    identity: str = ""
    combine: str = ""
    finalize: str = ""
    pairwise: bool = False
    empty_ok: bool = True
    ref: str = ""
    ref_identity: str = ""
    ref_finalize: str = ""
    a: tuple = ()
    b: tuple = ()
    bmin: float = 0.0
    scalars: tuple = ()
    scalar_a: tuple = ()
    x: tuple = ()
    tol: Tol = Tol()
    test: tuple = ()
    grad: object = ""  # binary: {a, b}; unary and reduction: the formula of a
    grad_scalar: str = ""  # binary: the formula of a in <op>_scalar

    @staticmethod
    def c_double(v):
        """C spelling of double v (NAN and INFINITY by name)."""
        if v != v:
            return "NAN"
        if v in (float("inf"), float("-inf")):
            return "INFINITY" if v > 0 else "-INFINITY"
        return repr(float(v))

    def expr_for(self, dt):
        return expr_for({"": self.expr, "int": self.expr_int, "uint": self.expr_uint, "bool": self.expr_bool}, dt)

    def combine_for(self, acc):
        """The fold for accumulation type acc (an Accum)."""
        c = self.combine if acc.is_float else self.combine_int or self.combine
        return float_suffix(c, acc.c_type)

    def identity_for(self, acc):
        i = self.identity if acc.is_float else self.identity_int or self.identity
        return i.replace("{LOWEST}", acc.lowest).replace("{HIGHEST}", acc.highest)

    def finalize_for(self, acc):
        return float_suffix(self.finalize, acc.c_type)

    def applies(self, dt):
        return dt.kind in self.kinds

    def out_tensor(self, dt):
        """The C type of the result tensor for dtype dt."""
        if self.result == "bool":
            return "tensor_bool"
        if self.result == "sum" and not dt.is_float:
            return "tensor_i64"
        return dt.tensor

    def out_dtype(self, dt):
        """The NAME of the result's dtype for dtype dt."""
        return self.out_tensor(dt)[len("tensor_"):].upper()

    def c_list(self, field):
        """C initializer of a list field: {lo, hi} or {s0, s1, ...}."""
        return "{" + ", ".join(self.c_double(v) for v in getattr(self, field)) + "}"

    @property
    def kernel_name(self):
        return f"reduce_{self.name}" if self.kind == "reduction" else self.name


_EW_DEFAULTS = {"kinds": ["float"], "result": "same", "expr_int": "", "expr_uint": "", "expr_bool": "",
                "grad": ""}
OP_DEFAULTS = {
    "binary": {**_EW_DEFAULTS, "scalar": True, "out": True, "vector_times": "",
               "a": [-4.0, 4.0], "b": [-4.0, 4.0], "bmin": 0.0, "scalars": [2.5, -0.1, 3.0], "tol": {}, "grad": {}, "grad_scalar": ""},
    "unary": {**_EW_DEFAULTS, "out": True, "vector": "", "vector_f64": "", "a": [-6.0, 6.0], "tol": {}},
    "reduction": {"kinds": ["float"], "result": "same", "combine_int": "", "identity_int": "",
                  "ref_finalize": "acc", "x": [-1.0, 1.0], "tol": {}, "grad": ""},
}
_EW_FIELDS = {"kinds": list, "result": str, "expr_int": str, "expr_uint": str, "expr_bool": str,
              "out": bool}
OP_FIELDS = {
    "binary": {"name": str, "expr": str, "ref": str, "a": list, "b": list, "bmin": float,
               "scalars": list, "scalar_a": list, "tol": dict, "scalar": bool, **_EW_FIELDS,
               "grad": (dict, str), "grad_scalar": str, "vector_times": str},
    "unary": {"name": str, "expr": str, "vector": str, "vector_f64": str, "ref": str, "a": list, "tol": dict,
              **_EW_FIELDS, "grad": str},
    "reduction": {"name": str, "identity": str, "combine": str, "finalize": str,
                  "pairwise": bool, "empty_ok": bool, "ref": str, "ref_identity": str,
                  "ref_finalize": str, "x": list, "tol": dict, "kinds": list, "result": str,
                  "combine_int": str, "identity_int": str, "grad": str},
}
OP_RESULTS = {"binary": ("same", "bool"), "unary": ("same", "bool"), "reduction": ("same", "sum", "bool")}
# (field, the names it may use)
OP_REFS = {
    "binary": (("ref", ("a", "b")),),
    "unary": (("ref", ("a",)),),
    "reduction": (("ref", ("acc", "x")), ("ref_identity", ()), ("ref_finalize", ("acc", "n"))),
}
TOL_FIELDS = {"binary": ("rel", "abs", "abs_x"), "unary": ("rel", "abs", "abs_x"),
              "reduction": ("rel", "fold")}


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _range(v, where):
    if not (isinstance(v, list) and len(v) == 2 and all(_is_num(x) and abs(x) != float("inf")
                                                          and x == x for x in v) and v[0] < v[1]):
        raise GenError(f"{where}: want [lo, hi], finite numbers with lo < hi")
    return (float(v[0]), float(v[1]))


def load_op(kind, table, group, where):
    """One op family entry, its test fields checked and defaulted."""
    table = {**OP_DEFAULTS[kind], **table}
    if kind == "binary":
        table.setdefault("scalar_a", table["a"])
    if _is_num(table.get("bmin")):
        table["bmin"] = float(table["bmin"])
    require(table, OP_FIELDS[kind], where)
    table["kinds"] = parse_kinds(table["kinds"], where)
    if table["result"] not in OP_RESULTS[kind]:
        raise GenError(f"{where}: result '{table['result']}' is none of {', '.join(OP_RESULTS[kind])}")
    if table["result"] == "bool":
        table["out"] = False  # no <op>_out into a bool tensor
    # each tolerance left out takes its default: 4 ulps of |want| for an
    # elementwise op; for a reduction, the summation bound when pairwise
    if kind == "reduction":
        table["tol"] = {"fold": 0.5 if table["pairwise"] else 0.0, **table["tol"]}
    else:
        table["tol"] = {"rel": 4.0, **table["tol"]}
    for field, names in OP_REFS[kind]:
        if field == "ref" and "float" not in table["kinds"] and not table[field]:
            continue  # an integer or bool op: t/drivers/t-kinds.c checks it against int64 arithmetic
        check_ref(table[field], names, f"{where}: {field}")
    for field in ("a", "b", "scalar_a", "x"):
        if field in table:
            table[field] = _range(table[field], f"{where}: {field}")
    if "bmin" in table and not 0 <= table["bmin"] < max(abs(v) for v in table["b"]):
        raise GenError(f"{where}: bmin must be >= 0 and below max |b|")
    if "scalars" in table:
        if not (1 <= len(table["scalars"]) <= 8 and all(map(_is_num, table["scalars"]))):
            raise GenError(f"{where}: scalars: want a list of 1 to 8 numbers")
        table["scalars"] = tuple(float(v) for v in table["scalars"])
    tol = table["tol"]
    extra = set(tol) - set(TOL_FIELDS[kind])
    if extra:
        raise GenError(f"{where}: tol: unknown field(s) {', '.join(sorted(extra))} "
                       f"(a {kind} op's tol has {', '.join(TOL_FIELDS[kind])})")
    for k, v in tol.items():
        if not (_is_num(v) and 0 <= v < float("inf")):
            raise GenError(f"{where}: tol.{k} must be a finite number >= 0")
    table["tol"] = Tol(**{k: float(v) for k, v in tol.items()})
    # the float kinds are value-checked against the ref by t-ops and
    # t-reduce (those with a bool result by t-kinds), the others against
    # int64 arithmetic by t-kinds
    float_test = "t-kinds" if table["result"] == "bool" else "t-reduce" if kind == "reduction" else "t-ops"
    test = tuple(dict.fromkeys(([float_test] if "float" in table["kinds"] else []) +
                               (["t-kinds"] if set(table["kinds"]) - {"float"} else [])))
    return Op(kind=kind, group=group, test=test, **table)


REDUCE_SIGNATURE = ("tendo__tensor *(const tendo__tensor *a, int dim, bool keepdim, tendo_dtype out_dtype, "
                    "tendo__cu_rows_fn cu)")


def op_functions(op, origin):
    """The functions an op family entry declares."""
    P = lambda *ps: tuple(Param(*p.rsplit(" ", 1)) for p in ps)
    ret = "tensor" if op.result == "same" else f"tensor_{op.result}"
    into = "a bool tensor" if op.result == "bool" else "a new tensor"
    exact = op.tol.rel == op.tol.abs == op.tol.abs_x == op.tol.fold == 0
    common = dict(generic=True, group=op.group, origin=origin, kinds=op.kinds, op=op, test=op.test, exact=exact)
    grad = lambda g: g if isinstance(g, dict) and g else {"a": g} if isinstance(g, str) and g not in ("", "none") \
        else ("none" if g == "none" else "")
    fns = []
    if op.kind == "binary":
        fns.append(Fn(op.name, ret, P("ctensor a", "ctensor b"),
                      f"{op.expr} elementwise, NumPy broadcasting; {into} the caller frees.", grad=grad(op.grad),
                      **common))
        if op.out:
            fns.append(Fn(op.name + "_out", "tendo_status", P("tensor out", "ctensor a", "ctensor b"),
                          f"out = {op.expr}, into out (the broadcast shape; out may be a or b, but not "
                          "partly overlap them); no allocation.", writes="out", **common))
        if op.scalar:
            fns.append(Fn(op.name + "_scalar", ret, P("ctensor a", "double s"),
                          f"{op.expr.replace('b', 's')} for every element a"
                          + (" (compared in double)" if op.result == "bool" else
                             " (s converted to the dtype first)") + f"; {into} the caller frees.",
                          grad=grad(op.grad_scalar), **common))
        return fns
    if op.kind == "unary":
        fns.append(Fn(op.name, ret, P("ctensor a"), f"{op.expr} elementwise; {into} the caller frees.",
                      grad=grad(op.grad), **common))
        if op.out:
            fns.append(Fn(op.name + "_out", "tendo_status", P("tensor out", "ctensor a"),
                          f"out = {op.expr}, into out (a's shape; out may be a); no allocation.", writes="out",
                          **common))
        return fns
    what = {"same": "", "sum": " (an integer or bool input gives i64)", "bool": " (a bool tensor)"}[op.result]
    k = op.kernel_name
    return [Fn(op.name, "tensor_sum" if op.result == "sum" else ret, P("ctensor a", "int dim", "bool keepdim"),
               f"The {op.name} over dim (negative counts from the end), kept as size 1 when keepdim{what}.  "
               "A new tensor the caller frees.",
               call=f"{{cpu:{k}}}(a, dim, keepdim, {{RET_DT}}, {{cuda:{k}}})", grad=grad(op.grad),
               **{**common, "op": None})]


def op_kernel(op, origin):
    if op.kind == "reduction":
        return Kernel(op.kernel_name, origin, cpu="reduce", signature=REDUCE_SIGNATURE, cuda="rows",
                      source="reduce", header="rows.cuh", macro="reduction", op=op,
                      doc=f"The {op.name} over dim, kept as size 1 when keepdim, as out_dtype.")
    return Kernel(op.name, origin, cuda="loop", source="ops", header="elementwise.cuh", macro=op.kind, op=op,
                  doc=f"{op.name}: ctx NULL" + (", or the scalar of _scalar" if op.kind == "binary" and op.scalar
                                                 else ""))


