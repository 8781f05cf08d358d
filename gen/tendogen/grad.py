"""Derivatives: the `grad` formulas of gen/registry/ compiled into C.

A differentiable function (a float result of its own float dtype computed
from tensors of that dtype) gives, per tensor param, its gradient as a C
expression written in tendo's own functions, like PyTorch's
derivatives.yaml: `grad` is the gradient of the result, `result` the
result, a param's name its value (a saved tensor, or a scalar of the call),
`i` the element of a ctensors param.  A key naming several params
("q, k, v") gives them one joint formula, a call of a helper that returns
"tensors": it computes every wanted gradient of the group in one pass
(a fused backward kernel) and is told which are wanted, as PyTorch's
grad_input_mask does.  A call `f(...)` is the function f of
the dtype being generated (a name of gen/registry/), `X.f(...)` the
function f of dtype X ({dt} and {to} are filled in), and the helpers of
gen/registry/autograd.toml's [[helper]] tables take the place of what
tendo has no function for (shape bookkeeping).  Every tensor a formula
makes is kept by the backward function's scope and freed after it.

A function that writes into a tensor param (`writes = "out"`) refuses when
grad mode is on and an operand requires grad, and bumps the storage
version of what it wrote (a saved tensor so modified fails backward).

The entry points of wrapped functions (differentiable or writing) are
rendered as static tendo__fwd_<name> by their bodies and wrapped by
templates/api/grad.j2.
"""

import dataclasses
import re

from . import GenError
from .model import FIXED_TENSOR_KINDS

CALL = re.compile(r"(?:([A-Za-z_{}][\w{}]*)\.)?([A-Za-z_][\w{}]*)\s*\(")
# identifiers a formula may use besides its names: C's
C_NAMES = {"true", "false", "NAN", "INFINITY", "NULL", "double", "int64_t",
           "node", "TENDO_REDUCE_SUM"}
# pointer params a node copies into its ctx: kind -> element type
POINTER_PARAMS = {"const int *": "int", "const int64_t *": "int64_t"}


@dataclasses.dataclass(frozen=True)
class Helper:
    name: str
    ret: str       # "tensor" (of the dtype), "tensors" (a joint formula's) or a C type
    params: tuple  # (kind, name): kinds of model.PARAM_KINDS, C types, or "input"
    doc: str

    def c_name(self, dt):
        return f"tendo__grad_{self.name}_{dt.name}"

    def c_ret(self, dt):
        if self.ret == "tensors":  # true, or false with the error set
            return "bool"
        return f"{dt.tensor} *" if self.ret == "tensor" else self.ret

    def c_params(self, dt):
        out = ["const tendo__node *node"]
        for kind, name in self.params:
            if kind == "input":
                out.append(f"int {name}")
            elif kind == "ctensor":
                out.append(f"const {dt.tensor} *{name}")
            elif kind in FIXED_TENSOR_KINDS:
                out.append(f"const tensor_{FIXED_TENSOR_KINDS[kind]} *{name}")
            else:
                out.append(f"{kind}{'' if kind.endswith('*') else ' '}{name}")
        if self.ret == "tensors":  # which of the group are wanted, and where each goes
            out += ["const bool *want", f"{dt.tensor} **got"]
        return ", ".join(out)

    def decl(self, dt):
        r = self.c_ret(dt)
        return f"{r}{'' if r.endswith('*') else ' '}{self.c_name(dt)}({self.c_params(dt)})"


def load_helper(table, where):
    for k in ("name", "ret", "params", "doc"):
        if k not in table:
            raise GenError(f"{where}: a helper has {k}")
    extra = set(table) - {"name", "ret", "params", "doc"}
    if extra:
        raise GenError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
    params = []
    for p in table["params"]:
        kind, _, name = p.rpartition(" ")
        params.append((kind.strip(), name))
    return Helper(table["name"], table["ret"], tuple(params), table["doc"])


def input_params(fn):
    """The params that are the node's inputs: tensors of the function's own dtype."""
    return [p for p in fn.params if p.is_tensor]


def differentiable(inst, dt, by_name):
    """Whether inst of dt is a differentiable function: a float result of a
    float dtype from tensors of its own dtype, writing nothing."""
    fn = inst.fn
    if fn.writes or not dt.is_float or not input_params(fn):
        return False
    rd = inst.ret_dtype(dt, by_name)
    return rd is not None and rd.is_float and inst.c_ret(dt).startswith("tensor_")


def kind_of(inst, dt, by_name):
    """"record", "write" or "" (the entry point is not wrapped)."""
    if inst.fn.writes:
        return "write"
    if differentiable(inst, dt, by_name) and inst.fn.grad != "none":
        return "record"
    return ""


@dataclasses.dataclass
class Group:
    """The inputs one formula gives: one, or several (joint)."""
    names: list            # input names
    index: list            # their input indices
    c: str                 # the C expression (joint: a bool call filling want_/got_)
    joint: bool


@dataclasses.dataclass
class Plan:
    """What the record and the backward of one function of one dtype are."""
    res: object            # the result's Dtype
    inputs: list           # the input params (own-dtype tensors)
    formulas: dict         # input name -> C expression (of a single formula)
    groups: list           # Group of each formula, in the order of their first input
    saved: list            # (name, C type, the inputs whose formulas use it)
    ctx: list              # (C declaration, param name, how it is filled)
    ntemps: int = 0


class Compiler:
    def __init__(self, reg, dtypes):
        self.reg = reg
        self.dtypes = dtypes
        self.by_name = {d.name: d for d in dtypes}
        self.helpers = {h.name: h for h in reg.helpers}
        self._fns = {}

    def fns_of(self, d):
        """name -> Instance of dtype d."""
        if d.name not in self._fns:
            self._fns[d.name] = {i.name_for(d): i for i in self.reg.instances(d, self.dtypes)}
        return self._fns[d.name]

    def plan(self, inst, dt):
        fn = inst.fn
        name = inst.name_for(dt)
        where = f"{fn.origin}{f' ({name})' if name != fn.name else ''}, {dt.name}"
        grads = fn.grad
        if not isinstance(grads, dict):
            raise GenError(f"{where}: no derivative: give grad = {{ param = \"formula\" }} "
                           "for its tensor params, or grad = \"none\"")
        inputs = input_params(fn)
        names = [p.name for p in inputs]
        keys = {k: [n.strip() for n in k.split(",")] for k in grads}
        given = [n for ns in keys.values() for n in ns]
        missing = [n for n in names if n not in given]
        extra = set(given) - set(names)
        twice = sorted({n for n in given if given.count(n) > 1})
        if missing or extra or twice:
            raise GenError(f"{where}: grad: want a formula for each of {', '.join(names)}"
                           + (f" (none for {', '.join(missing)})" if missing else "")
                           + (f" (not params: {', '.join(sorted(extra))})" if extra else "")
                           + (f" (more than one for {', '.join(twice)})" if twice else ""))
        plan = Plan(inst.ret_dtype(dt, self.by_name), inputs, {}, [], [], [])
        params = {p.name: p for p in fn.params}
        used_saved, used_ctx = {}, []
        for key, group in sorted(keys.items(), key=lambda kv: names.index(kv[1][0])):
            first = params[group[0]]
            joint = self._joint_helper(grads[key], where)
            if (len(group) > 1) != (joint is not None):
                raise GenError(f"{where}: grad: {key!r} wants " + (
                    "one call of a helper returning \"tensors\"" if len(group) > 1 else
                    "a tensor: a helper returning \"tensors\" gives a joint formula (\"a, b\" = ...)"))
            c, temps = self.compile(grads[key], inst, dt, params, first, where, used_saved, used_ctx, group)
            if joint:
                c = c[:-1] + ", want_, got_)"
            else:
                plan.formulas[group[0]] = c
            plan.groups.append(Group(group, [names.index(n) for n in group], c, bool(joint)))
            plan.ntemps += temps + len(group)  # one scope holds every formula's temporaries
        for name, users in used_saved.items():
            if name == "result":
                ctype = f"const {plan.res.tensor} *"
            else:
                p = params[name]
                ctype = f"const tensor_{p.fixed_dtype or dt.name} *"
            plan.saved.append((name, ctype, users))
        for name in dict.fromkeys(used_ctx):
            p = params[name]
            if p.kind in POINTER_PARAMS:
                plan.ctx.append((f"{POINTER_PARAMS[p.kind]} {name}[TENDO_MAX_DIMS]", name, "array"))
            else:
                plan.ctx.append((p.c_decl(dt), name, "value"))
        if plan.ntemps > 40:
            raise GenError(f"{where}: a formula makes {plan.ntemps} tensors, past the scope's 40")
        return plan

    def _joint_helper(self, formula, where):
        """The "tensors" helper a joint formula calls (the whole formula is
        one call of it), or None; such a helper anywhere else is an error."""
        m = re.match(r"\s*([A-Za-z_]\w*)\s*\(", formula)
        h = self.helpers.get(m.group(1)) if m else None
        if h is not None and h.ret == "tensors":
            depth = 0
            for j in range(m.end() - 1, len(formula)):
                depth += {"(": 1, ")": -1}.get(formula[j], 0)
                if depth == 0:
                    break
            if formula[j + 1:].strip():
                raise GenError(f"{where}: {h.name}(...) must be the whole formula")
            return h
        for m in CALL.finditer(formula):
            h = self.helpers.get(m.group(2))
            if m.group(1) is None and h is not None and h.ret == "tensors":
                raise GenError(f"{where}: {h.name}(...) must be the whole formula")
        return None

    def compile(self, formula, inst, dt, params, input_p, where, used_saved, used_ctx, users=None):
        """The C expression of one formula (for the inputs users, default
        input_p alone), and how many tensors it makes."""
        to = inst.to
        f = formula.replace("{dt}", dt.name)
        if to is not None:
            f = f.replace("{to}", to.name)
        elif "{to}" in f:
            raise GenError(f"{where}: {{to}} in the formula of a function that is not per_target")
        res, last, temps = [], 0, 0
        for m in CALL.finditer(f):
            res.append(self._names(f[last:m.start()], dt, params, input_p, where, used_saved, used_ctx, users))
            call, is_tensor = self._call(m.group(1), m.group(2), dt, where)
            res.append(call)
            temps += is_tensor
            last = m.end()
        res.append(self._names(f[last:], dt, params, input_p, where, used_saved, used_ctx, users))
        return re.sub(r"@(\d+)", r"\1", self._close_keeps("".join(res))), temps

    def _call(self, dname, name, dt, where):
        if dname is None and name in self.helpers:
            h = self.helpers[name]
            opener = f"{h.c_name(dt)}(node, "
            if h.ret == "tensor":
                return f"(({h.c_ret(dt)})K\x01{opener}", True
            return opener, False
        d = dt
        if dname is not None:
            d = self.by_name.get(dname)
            if d is None:
                raise GenError(f"{where}: {dname}.{name}: no dtype {dname} in this build")
        target = self.fns_of(d).get(name)
        if target is None:
            raise GenError(f"{where}: '{name}' is no function of {d.name} (nor a helper of "
                           "gen/registry/autograd.toml)")
        ret = target.c_ret(d)
        if ret.startswith("tensor_") and ret.endswith("*"):
            return f"(({ret})K\x01{target.c_name(d)}(", True
        return f"{target.c_name(d)}(", False

    @staticmethod
    def _close_keeps(c):
        """K\x01f(args) -> K(f(args)): the keep's parenthesis closes after the call's."""
        while "\x01" in c:
            i = c.rindex("\x01")  # innermost first: its extra parenthesis closes before an outer scan
            depth, j = 0, c.index("(", i)
            while True:
                if c[j] == "(":
                    depth += 1
                elif c[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            c = c[:i] + "(" + c[i + 1:j + 1] + "))" + c[j + 1:]
        return c

    def _names(self, text, dt, params, input_p, where, used_saved, used_ctx, users=None):
        users = users or [input_p.name]

        def sub(m):
            w = m.group()
            if w == "grad":
                return "grad"
            if w == "result":
                used_saved.setdefault("result", []).extend(users)
                return "result"
            if w == "i":
                if input_p.kind != "ctensors":
                    raise GenError(f"{where}: 'i' only in the formula of a ctensors param")
                return "i"
            if w in C_NAMES:
                return w
            p = params.get(w)
            if p is None:
                raise GenError(f"{where}: '{w}' is no param, grad, result or C constant")
            if p.is_tensor or p.fixed_dtype:
                if p.kind == "ctensors":
                    raise GenError(f"{where}: a ctensors param's values cannot be saved; use helpers")
                if self._as_input(text, m.start()):
                    return str(self._input_index(params, p, where))
                used_saved.setdefault(w, []).extend(users)
                return w
            used_ctx.append(w)
            return f"c->{w}"
        # numbers such as 1e-3 or 0x1 are not names
        return re.sub(r"(?<![\w.>])[A-Za-z_]\w*", sub, text)

    @staticmethod
    def _as_input(text, at):
        """Whether the name at `at` is passed as an input index: written `@name`."""
        return at > 0 and text[at - 1] == "@"

    @staticmethod
    def _input_index(params, p, where):
        ins = [q for q in params.values() if q.is_tensor]
        if p not in ins:
            raise GenError(f"{where}: @{p.name}: only an input (a tensor of the function's dtype) is @-named")
        return ins.index(p)

