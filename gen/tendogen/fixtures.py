"""t/fault-table.h: a sample call of every function for every dtype.

The allocation-failure sweep (t/drivers/t-fault.c) and the device coverage test
(t/drivers/t-coverage.c) call every per-dtype function through a thunk whose
arguments are synthesized here from each param's kind and name.  A param
these rules cannot place makes the generator refuse, naming it: give the
function a `sample = { param = value }` in its registry entry (a fixture
name for a tensor param, a number or bool for a scalar one, a list of
sizes for a shape).
"""

from . import GenError
from .grad import kind_of
from .model import FIXED_TENSOR_KINDS, WRITABLE_KINDS
from .ops import _is_num

# The fixture tensors of the dtype being swept: name -> shape.  "fresh" (a
# new [3,4] tensor the call takes over) and "null" are the other values a
# tensor param may take.
FIXTURES = {"t34": (3, 4), "t43": (4, 3), "t44": (4, 4), "t4": (4,), "t0": (), "out34": (3, 4), "leaf34": (3, 4)}
# leaf34 (of a float dtype) is an autograd leaf that has a gradient (tf_make_leaf);
# t0 is 0-d (a loss's gradient)
# Fixtures of one fixed dtype, whatever dtype is swept: name -> (shape, dtype),
# and the one a param of each fixed-dtype kind gets unless its sample says.
FIXED_FIXTURES = {"mask34": ((3, 4), "bool"), "idx4": ((4,), "i64"), "idx4_i32": ((4,), "i32"),
                  "idx34": ((3, 4), "i64"), "idx3": ((3,), "i64"), "out33_i32": ((3, 3), "i32")}
FIXED_DEFAULT = {"ctensor_bool": "mask34", "ctensor_i64": "idx4", "ctensor_i32": "idx4_i32",
                 "tensor_i32": "out33_i32"}
TENSOR_SAMPLES = tuple(FIXTURES) + ("fresh", "null")
# Writable fixtures of the swept dtype's optimizer-state dtype (f32, or f64
# for f64), for `state` params: each such param of a call needs its own.
STATE_FIXTURES = {"st34a": (3, 4), "st34b": (3, 4), "st34c": (3, 4)}
# Scalar params by (C type, name); any bool is false.
SCALARS = {
    "int": {"dim": 1, "root": 0, "d0": 0, "d1": 1, "start_dim": 0, "end_dim": 1, "n": 2},
    "int64_t": {"start": 0, "length": 2, "stop": 3, "step": 1, "count": 12, "k": 1, "correction": 1},
    "double": {"start": 0.0, "stop": 12.0, "step": 1.0, "value": 1.5, "lo": -1.0, "hi": 1.0,
               "eps": 1e-5, "s": 2.5},
    "uint64_t": {"seed": 42},
}
DATA_ELEMS = 12  # the sample data / out_data buffers hold this many elements


def _c_number(kind, v, where):
    if isinstance(v, bool) or not _is_num(v):
        raise GenError(f"{where}: want a number")
    if kind == "double":
        return repr(float(v))
    if not isinstance(v, int):
        raise GenError(f"{where}: want an integer")
    return str(v)


def sample_args(fn, dt, where):
    """The C argument expressions of a sample call of fn for dtype dt (a
    thunk's context is `x`, see templates/t/fault-table.h.j2)."""
    sample = dict(fn.sample)
    unknown = set(sample) - {p.name for p in fn.params}
    if unknown:
        raise GenError(f"{where}: sample names {', '.join(sorted(unknown))}, not a param")
    args, params = [], list(fn.params)
    for i, p in enumerate(params):
        w = f"{where}: param '{p.kind} {p.name}'"
        if p.fixed_dtype:
            v = sample.get(p.name, FIXED_DEFAULT[p.kind])
            if FIXED_FIXTURES.get(v, (0, ""))[1] != p.fixed_dtype:
                raise GenError(f"{w}: sample '{v}' is no {p.fixed_dtype} fixture")
            const = "" if p.kind in WRITABLE_KINDS else "const "
            args.append(f"({const}tensor_{p.fixed_dtype} *)x->fix[TF_{v.upper()}]")
        elif p.kind == "ctensors":
            # an array of n fixtures (the `int n` param's sample, 2 by default)
            v = sample.get(p.name, "t34")
            n = sample.get("n", SCALARS["int"]["n"])
            if v not in FIXTURES or not isinstance(n, int) or not 0 < n <= 4:
                raise GenError(f"{w}: sample '{v}' (n {n}): want a fixture of {', '.join(FIXTURES)}, n 1..4")
            elem = f"(const {dt.tensor} *)x->fix[TF_{v.upper()}]"
            args.append(f"(const {dt.tensor} *const[]){{{', '.join([elem] * n)}}}")
        elif p.is_tensor:
            v = sample.get(p.name, "t4" if p.kind == "ctensor_opt" else "t34" if p.kind == "ctensor"
                           else "out34" if p.name == "out" else "fresh")
            if v not in TENSOR_SAMPLES:
                raise GenError(f"{w}: sample '{v}' is none of {', '.join(TENSOR_SAMPLES)}")
            if v == "null" and p.kind != "ctensor_opt":
                raise GenError(f"{w}: only a ctensor_opt may be null")
            const = "const " if p.kind != "tensor" else ""
            if v == "null":
                args.append("NULL")
            elif v == "fresh":
                args.append(f"({const}{dt.tensor} *)tf_take_fresh(x)")
            else:
                args.append(f"({const}{dt.tensor} *)x->fix[TF_{v.upper()}]")
        elif p.is_state:
            v = sample.get(p.name, "")
            if v not in (*STATE_FIXTURES, "null"):
                raise GenError(f"{w}: a state param's sample is one of {', '.join(STATE_FIXTURES)}, null")
            args.append("NULL" if v == "null" else f"(tensor_{dt.state_dtype} *)x->fix[TF_{v.upper()}]")
        elif p.kind == "data":
            args.append(f"(const {dt.c_type} *)(const void *)x->data")
        elif p.kind == "out_data":
            args.append(f"({dt.c_type} *)(void *)x->buf")
        elif p.kind == "int" and p.name == "ndim" and i + 1 < len(params) \
                and params[i + 1].kind == "const int64_t *" and params[i + 1].name == "shape":
            shape = sample.get("shape", [3, 4])
            if not (isinstance(shape, list) and shape and all(isinstance(v, int) and not isinstance(v, bool)
                                                               and v >= -1 for v in shape)):
                raise GenError(f"{w}: sample shape: want a list of sizes (>= 0, or -1 where allowed)")
            args.append(str(len(shape)))
        elif p.kind == "const int64_t *" and p.name == "shape" and i > 0 and params[i - 1].name == "ndim":
            args.append("(const int64_t[]){" + ", ".join(str(v) for v in sample.get("shape", [3, 4])) + "}")
        elif p.kind == "const int *" and p.name == "perm":
            perm = sample.get("perm", [1, 0])
            args.append("(const int[]){" + ", ".join(_c_number("int", v, w) for v in perm) + "}")
        elif p.is_out:
            # a local of the thunk (see templates/t/fault-table.h.j2), or
            # NULL with `sample = { name = "null" }`
            v = sample.get(p.name, "out")
            if v not in ("out", "null"):
                raise GenError(f"{w}: sample '{v}' is none of out, null")
            args.append("NULL" if v == "null" else f"&tf_out_{p.name}")
        elif p.kind == "erased":
            # the call's result is this very handle, which the thunk frees
            args.append("(tendo_tensor *)tf_take_fresh(x)")
        elif p.kind == "tendo_device":
            args.append("x->device")
        elif p.kind == "FILE *":
            args.append("x->file")
        elif p.kind == "const tendo_comm *":
            args.append("x->comm")
        elif p.kind == "tendo_reduce_op":
            v = sample.get(p.name, "TENDO_REDUCE_SUM")
            if v not in ("TENDO_REDUCE_SUM", "TENDO_REDUCE_AVG", "TENDO_REDUCE_MAX", "TENDO_REDUCE_MIN",
                         "TENDO_REDUCE_PROD"):
                raise GenError(f"{w}: sample '{v}' is no tendo_reduce_op")
            args.append(v)
        elif p.kind == "bool":
            v = sample.get(p.name, False)
            if not isinstance(v, bool):
                raise GenError(f"{w}: want true or false")
            args.append("true" if v else "false")
        elif p.kind in SCALARS:
            if p.name in sample:
                args.append(_c_number(p.kind, sample[p.name], w))
            elif p.name in SCALARS[p.kind]:
                args.append(_c_number(p.kind, SCALARS[p.kind][p.name], w))
            else:
                raise GenError(f"{w}: no sample value for it; add `sample = {{ {p.name} = ... }}`")
        else:
            raise GenError(f"{w}: the fault sweep cannot make a sample of this kind; "
                           "teach tendogen/fixtures.py's sample_args or give a sample")
    if p_count := sum(1 for p in params if p.kind == "out_data"):
        if p_count > 1 or not any(p.kind == "int64_t" and p.name == "count" for p in params):
            raise GenError(f"{where}: an out_data param needs an 'int64_t count' beside it")
    if sample.get("count", DATA_ELEMS) > DATA_ELEMS:
        raise GenError(f"{where}: sample count is past the {DATA_ELEMS}-element buffers")
    return args


def fixtures(dtypes):
    """Every fixture of t/fault-table.h: name -> (shape, fixed dtype or "")
    (the fixed-dtype ones only where this build has that dtype)."""
    built = {d.name for d in dtypes}
    return {**{k: (v, "") for k, v in FIXTURES.items()},
            **{k: v for k, v in FIXED_FIXTURES.items() if v[1] in built},
            **{k: (v, "state") for k, v in STATE_FIXTURES.items()}}


def sample_calls(reg, dtypes):
    """Every per-dtype function as a sample call: dicts of dt, inst (the
    Instance), name (the C function), ret (its C type), args, and outs (the
    out-tensor locals: (C type, name))."""
    calls = []
    by_name = {d.name: d for d in dtypes}
    for dt in dtypes:
        for inst in reg.instances(dt, dtypes):
            fn = inst.fn
            where = f"{fn.origin} ({inst.name})"
            args = sample_args(fn, dt, where)
            outs = [(f"tensor_{p.out_dtype or dt.name}", p.name) for p in fn.params
                    if p.is_out and f"&tf_out_{p.name}" in args]
            ret = inst.c_ret(dt)
            calls.append({"dt": dt, "inst": inst, "name": inst.c_name(dt), "ret": ret, "args": args, "outs": outs,
                          "kind": _ret_kind(ret, outs), "refused": fn.refused("cuda", dt),
                          "grad": kind_of(inst, dt, by_name) == "record", "domain": grad_domain(fn)})
    return calls


def grad_domain(fn):
    """Where t/t-grad draws a differentiable function's fixtures: its op's
    test range (both operands' of a binary op, which share a fixture, away
    from 0 by bmin), within [-4, 4]; [-1, 1] for the others."""
    op = fn.op
    if op is None:
        return (-1.0, 1.0)
    lo, hi = op.x if op.kind == "reduction" else op.a
    if op.kind == "binary":
        lo, hi = max(lo, op.b[0]), min(hi, op.b[1])
        if op.bmin > 0:
            lo = max(lo, op.bmin)
    return (max(lo, -4.0), min(hi, 4.0))


def _ret_kind(ret, outs):
    """How a thunk treats the call's result (templates/t/fault-table.h.j2)."""
    if outs:
        return "outs"
    if ret in ("tendo_status", "void", "tendo_device"):
        return {"tendo_status": "status", "void": "void", "tendo_device": "device"}[ret]
    if ret == "tendo_tensor *":
        return "erased"
    if ret.startswith("tensor_") and ret.endswith("*"):
        return "tensor"
    return "pointer" if ret.endswith("*") else "scalar"


assert set(FIXED_DEFAULT) == set(FIXED_TENSOR_KINDS)
