"""The registry of functions (gen/registry/*.toml): every public per-dtype
function, once, with its signature, the kinds of dtype it exists for, its
result dtype, how its typed entry point is written (a `call` into the core
or a `body` macro of its group's template), the CPU and CUDA kernels that
serve it, the test that checks it and its doc line.  Each file is a group:
its functions' entry points are src/gen/<group>_<dt>.c.

Besides [[fn]] tables a file may hold op families, [[binary]], [[unary]]
and [[reduction]]: one entry per op, expanded here into its functions
(<op>, <op>_out, <op>_scalar) and kernels; and [[kernel]] tables: a kernel
is written once per accumulation type on the CPU (a section of
templates/cpu/<cpu>.c.j2) and once per dtype on a GPU (a launcher in
src/gen/cuda_<source>_<dt>.cu), and exists for exactly the dtypes some
function that uses it exists for.  docs/registry.md documents every field.
"""

import dataclasses
import glob
import os
import re
import tomllib

from . import GenError
from .dtypes import IDENT, parse_kinds, require
from .model import (CUDA_ABIS, CUDA_HEADERS, CUDA_SOURCES, CPU_PARTS, DEVICES, FIXED_TENSOR_KINDS, PLACEHOLDER, RET_KINDS,
                    TENSOR_KINDS, Fn, Kernel, KernelUse, Param)
from .grad import load_helper
from .ops import OP_FIELDS, load_op, op_functions, op_kernel

# The statuses a refused cell may fail with: a function that has no kernel
# there, or one whose result cannot exist there (a host pointer).
REFUSALS = ("TENDO_ERR_UNSUPPORTED", "TENDO_ERR_DEVICE")

# ---- [[fn]] and [[kernel]] tables -----------------------------------------

FN_FIELDS = {"name": str, "ret": str, "params": list, "doc": str, "generic": bool, "per_target": bool,
             "sample": dict, "kinds": list, "overloads": dict, "dtypes": list, "call": str, "body": str,
             "kernels": list, "observe": bool, "expr": str, "expr_int": str, "expr_uint": str,
             "expr_bool": str, "fill": str, "refuse": dict, "refuse_with": str, "exact": bool, "values": bool,
             "test": (str, list), "grad": (dict, str), "writes": str, "symbol": str}
FN_DEFAULTS = {"per_target": False, "sample": {}, "kinds": ["all"], "overloads": {}, "dtypes": [],
               "call": "", "body": "", "kernels": [], "observe": False, "expr": "", "expr_int": "",
               "expr_uint": "", "expr_bool": "", "fill": "", "refuse": {}, "grad": "", "writes": "",
               "symbol": "tensor_{dt}_{name}", "refuse_with": "TENDO_ERR_UNSUPPORTED", "exact": True,
               "values": True}
KERNEL_FIELDS = {"name": str, "cpu": str, "signature": str, "cuda": str, "source": str, "cuda_body": str,
                 "header": str, "macro": str, "needs": list, "per_target": bool, "doc": str}
KERNEL_DEFAULTS = {"cpu": "", "signature": "", "cuda": "", "source": "", "cuda_body": "", "header": "", "macro": "",
                   "needs": [], "per_target": False}


def parse_params(params, where):
    out = []
    for p in params:
        if not isinstance(p, str):
            raise GenError(f"{where}: bad param {p!r} (want 'KIND name')")
        kind, _, name = p.rpartition(" ")
        kind = kind.strip()
        if not kind or not IDENT.match(name.lstrip("*")):
            raise GenError(f"{where}: bad param '{p}' (want 'KIND name')")
        if not kind.endswith("*") and name.startswith("*"):
            kind, name = kind + " *", name[1:]
        out.append(Param(kind, name))
    return tuple(out)


def load_fn(table, group, where):
    has_tensor = any(isinstance(p, str) and p.split(" ")[0] in TENSOR_KINDS for p in table.get("params", []))
    table = {**FN_DEFAULTS, "generic": has_tensor, **table}
    require(table, FN_FIELDS, where)
    params = parse_params(table["params"], where)
    if bool(table["call"]) == bool(table["body"]):
        raise GenError(f"{where}: give exactly one of call (a C expression) and body (a template macro)")
    if table["body"] and not IDENT.match(table["body"]):
        raise GenError(f"{where}: body '{table['body']}' is not a macro name")
    if table["observe"] and not table["call"]:
        raise GenError(f"{where}: observe wraps a call")
    if not table["test"]:
        raise GenError(f"{where}: no test: name the program that checks it (test = \"t-...\")")
    for dev, rule in table["refuse"].items():
        if dev not in DEVICES or not isinstance(rule, str) or not re.fullmatch(r"always|no \w+", rule):
            raise GenError(f"{where}: refuse: want {{ device = \"always\" | \"no FIELD\" }} for a device of "
                           f"{', '.join(DEVICES)}")
    if table["refuse_with"] not in REFUSALS:
        raise GenError(f"{where}: refuse_with: want one of {', '.join(REFUSALS)}")
    exprs = tuple((k, table["expr" + ("_" + k if k else "")]) for k in ("", "int", "uint", "bool")
                  if table["expr" + ("_" + k if k else "")])
    fn = Fn(table["name"], table["ret"], params, table["doc"], table["generic"], group, where,
            kinds=parse_kinds(table["kinds"], where), dtypes=tuple(table["dtypes"]),
            per_target=table["per_target"], sample=tuple(sorted(table["sample"].items())),
            overloads=tuple(sorted(table["overloads"].items())), call=table["call"], body=table["body"],
            kernels=tuple(table["kernels"]), observe=table["observe"], exprs=exprs, fill=table["fill"],
            refuse=tuple(sorted(table["refuse"].items())), grad=_grad(table["grad"], where),
            writes=table["writes"],
            test=tuple([table["test"]] if isinstance(table["test"], str) else table["test"]),
            symbol=table["symbol"], refuse_with=table["refuse_with"], exact=table["exact"],
            values=table["values"])
    if not re.fullmatch(r"\w*(\{dt\}\w*|\{name\}\w*)+", fn.symbol) or "{name}" not in fn.symbol or \
            ("{dt}" not in fn.symbol and "{dt}" not in fn.name):
        raise GenError(f"{where}: symbol '{fn.symbol}': want a C name made of {{dt}} and {{name}} (one of them "
                       "naming the dtype)")
    if fn.generic and not any(p.is_tensor for p in params):
        raise GenError(f"{where}: a generic function needs a tensor param of its own dtype")
    if fn.overloads:
        fixed = [p for p in params if p.fixed_dtype]
        if not fn.generic or len(fixed) != 1:
            raise GenError(f"{where}: overloads need a generic function with one fixed-dtype tensor param")
        if any(d not in FIXED_TENSOR_KINDS.values() or d == fixed[0].fixed_dtype for d, _ in fn.overloads):
            raise GenError(f"{where}: overloads: want {{ dtype = \"fn\" }} for other index dtypes")
    if any(p.kind == "ctensors" for p in params) and params[0].kind != "ctensors":
        raise GenError(f"{where}: a ctensors param must come first (the generic macro dispatches on its [0])")
    if fn.writes and (fn.ret != "tendo_status" or
                      not any(p.name == fn.writes and p.kind in ("tensor", "tensor_i32") for p in params)):
        raise GenError(f"{where}: writes '{fn.writes}': want a `tensor` or `tensor_i32` param of that name "
                       "and ret tendo_status")
    if "{to}" in fn.name and not fn.per_target:
        raise GenError(f"{where}: {{to}} in the name of a function that is not per_target")
    if any(p.is_state for p in params) and set(fn.kinds) != {"float"}:
        raise GenError(f"{where}: a `state` param (the accumulation dtype's tensor) needs kinds = [\"float\"]")
    return fn


def _grad(g, where):
    """A `grad` field: {param: formula} (strings), "none" or ""."""
    if isinstance(g, str):
        if g not in ("", "none"):
            raise GenError(f"{where}: grad: want {{ param = \"formula\" }} or \"none\"")
        return g
    if not all(isinstance(v, str) and v for v in g.values()):
        raise GenError(f"{where}: grad: each formula is a nonempty string")
    return dict(g)


def load_kernel(table, where):
    table = {**KERNEL_DEFAULTS, **table}
    require(table, KERNEL_FIELDS, where)
    k = Kernel(table["name"], where, cpu=table["cpu"], signature=table["signature"], cuda=table["cuda"],
               source=table["source"], cuda_body=table["cuda_body"],
               header=table["header"] or CUDA_HEADERS.get(table["source"], ""), macro=table["macro"] or
               table["name"].replace("_{to}", ""), needs=tuple(table["needs"]), per_target=table["per_target"],
               doc=table["doc"])
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\{to\})?", k.name.replace("_{to}", "{to}")):
        raise GenError(f"{where}: name '{k.name}' is not an identifier")
    if not k.cpu and not k.cuda:
        raise GenError(f"{where}: a kernel has a CPU part (cpu = \"...\"), a CUDA part (cuda = \"...\") or both")
    if k.cpu and (k.cpu not in CPU_PARTS or not re.fullmatch(r"[^(]+\(.*\)", k.signature)):
        raise GenError(f"{where}: cpu: want one of {', '.join(CPU_PARTS)} and a signature \"RET (PARAMS)\"")
    if k.cuda and (k.cuda not in CUDA_ABIS or k.source not in CUDA_SOURCES):
        raise GenError(f"{where}: cuda: want an ABI of {', '.join(CUDA_ABIS)} and a source of "
                       f"{', '.join(CUDA_SOURCES)}")
    return k


class Registry:
    """Every function, op and kernel of gen/registry/, in the order of
    their groups (files) and, within one, of their tables."""

    def __init__(self, groups, fns, ops, kernels, helpers=()):
        self.groups = groups      # group names, in order
        self.fns = fns            # every Fn
        self.ops = ops            # every op family entry
        self.kernels = kernels    # name -> Kernel
        self.helpers = helpers    # the derivative formulas' helpers (tendogen/grad.py)
        self._uses_cache = {}

    @classmethod
    def load(cls, regdir, test_names=None):
        files = sorted(glob.glob(os.path.join(regdir, "*.toml")), key=_group_order)
        if not files:
            raise GenError(f"{regdir}: no registry files")
        groups, fns, ops, kernels, helpers = [], [], [], {}, []
        for path in files:
            group = os.path.splitext(os.path.basename(path))[0]
            if not IDENT.match(group):
                raise GenError(f"{path}: a group's name is a C identifier")
            with open(path, "rb") as f:
                data = tomllib.load(f)
            extra = set(data) - {"fn", "kernel", "helper", *OP_FIELDS}
            if extra:
                raise GenError(f"{path}: unknown table(s) {', '.join(sorted(extra))}")
            groups.append(group)
            for kind in OP_FIELDS:
                for i, table in enumerate(data.get(kind, [])):
                    where = f"{path}: {kind} #{i + 1}"
                    if isinstance(table.get("name"), str):
                        where += f" ({table['name']})"
                    op = load_op(kind, table, group, where)
                    if not IDENT.match(op.name):
                        raise GenError(f"{where}: name '{op.name}' is not a C identifier")
                    ops.append(op)
                    fns.extend(op_functions(op, where))
                    k = op_kernel(op, where)
                    if k.name in kernels:
                        raise GenError(f"{where}: kernel '{k.name}' declared twice")
                    kernels[k.name] = k
            for i, table in enumerate(data.get("fn", [])):
                where = f"{path}: fn #{i + 1}"
                if isinstance(table.get("name"), str):
                    where += f" ({table['name']})"
                fns.append(load_fn(table, group, where))
            for i, table in enumerate(data.get("helper", [])):
                helpers.append(load_helper(table, f"{path}: helper #{i + 1}"))
            for i, table in enumerate(data.get("kernel", [])):
                where = f"{path}: kernel #{i + 1}"
                k = load_kernel(table, where)
                if k.name in kernels:
                    raise GenError(f"{where}: kernel '{k.name}' declared twice")
                kernels[k.name] = k
        reg = cls(groups, fns, ops, kernels, tuple(helpers))
        reg._validate(test_names)
        return reg

    def _validate(self, test_names):
        names = {}
        for fn in self.fns:
            if fn.name in names:
                raise GenError(f"{fn.origin}: function '{fn.name}' declared twice (also {names[fn.name]})")
            names[fn.name] = fn.origin
        for fn in self.fns:
            for d, other in fn.overloads:
                o = next((f for f in self.fns if f.name == other), None)
                if o is None or o.generic or o.kinds != fn.kinds or \
                        [p.name for p in o.params] != [p.name for p in fn.params] or \
                        next((p.fixed_dtype for p in o.params if p.fixed_dtype), None) != d:
                    raise GenError(f"{fn.origin}: overload {other}: want a non-generic fn with the same "
                                   f"params and kinds whose fixed-dtype param is {d}")
            for kind, name in self._uses(fn):
                k = self.kernels.get(name)
                if k is None:
                    raise GenError(f"{fn.origin}: uses kernel '{name}', which no [[kernel]] declares")
                if kind == "cpu" and not k.cpu:
                    raise GenError(f"{fn.origin}: {{cpu:{name}}}: kernel '{name}' has no CPU part")
                if kind == "cuda" and not k.cuda:
                    raise GenError(f"{fn.origin}: {{cuda:{name}}}: kernel '{name}' has no CUDA part")
            for t in fn.test:
                if test_names is not None and t not in test_names:
                    raise GenError(f"{fn.origin}: test '{t}' is no test program of t/")
        for k in self.kernels.values():
            for n in k.needs:
                if n not in self.kernels or self.kernels[n].cpu != k.cpu:
                    raise GenError(f"{k.origin}: needs '{n}', which is no kernel of the same CPU template")

    @staticmethod
    def _uses(fn):
        """(part, kernel name) for each kernel fn names: cpu or cuda from a
        call's placeholders, "" for the kernels a body lists."""
        out = [(m.group(1), m.group(2)) for m in PLACEHOLDER.finditer(fn.call) if m.group(2)]
        out += [("", k) for k in fn.kernels]
        if fn.op is not None:
            out.append(("", fn.op.kernel_name))
        return out

    # ---- what exists for a set of dtypes ------------------------------------

    def prune(self, dtypes):
        """The registry without the functions that take or give a tensor of
        a fixed dtype this build leaves out (index_select_i32 without i32),
        and without the overloads naming them."""
        built = {d.name for d in dtypes}
        keep = [fn for fn in self.fns if all(p.fixed_dtype in (None, *built) for p in fn.params)
                and all(p.out_dtype in (None, *built) for p in fn.params)
                and RET_KINDS.get(fn.ret) in (None, *built)]
        keep = [dataclasses.replace(fn, overloads=tuple((d, f) for d, f in fn.overloads if d in built))
                for fn in keep]
        return Registry(self.groups, keep, self.ops, self.kernels, self.helpers)

    def instances(self, dt, dtypes):
        """Every C function dtype dt has, in registry order."""
        return [i for fn in self.fns if fn.applies(dt) for i in fn.instances(dtypes)]

    def group_items(self, group, dt, dtypes):
        """What src/gen/<group>_<dt>.c defines, in order: op family entries
        (an Op: its macro writes its loop and its functions) and function
        instances (the others)."""
        items, done = [], set()
        for fn in self.fns:
            if fn.group != group or not fn.applies(dt):
                continue
            if fn.op is not None and fn.op.kind != "reduction":
                if fn.op.name not in done:
                    done.add(fn.op.name)
                    items.append(fn.op)
                continue
            items.extend(fn.instances(dtypes))
        return items

    def kernel_uses(self, dt, dtypes):
        """The kernels dtype dt's functions use (needs included), each once, in registry order."""
        key = (dt, tuple(dtypes))
        if key not in self._uses_cache:
            self._uses_cache[key] = self._kernel_uses(dt, dtypes)
        return self._uses_cache[key]

    def _kernel_uses(self, dt, dtypes):
        wanted = set()
        for fn in self.fns:
            if not fn.applies(dt):
                continue
            for inst in fn.instances(dtypes):
                wanted.update(inst.kernels())
                if fn.op is not None:
                    wanted.add(fn.op.kernel_name)
        grow = True
        while grow:
            grow = False
            for name in list(wanted):
                for n in self._kernel_of(name).needs:
                    if n not in wanted:
                        wanted.add(n)
                        grow = True
        out = []
        for k in self.kernels.values():
            for name, to in k.instances(dtypes):
                if name in wanted:
                    out.append(KernelUse(k, name, to))
        return out

    def _kernel_of(self, name):
        if name in self.kernels:
            return self.kernels[name]
        for k in self.kernels.values():
            if k.per_target and re.fullmatch(re.escape(k.name).replace(r"\{to\}", r"\w+"), name):
                return k
        raise GenError(f"no kernel '{name}'")

    def user_of(self, kernel, dt):
        """The first function of dt that uses kernel (its expr serves the kernel's functor)."""
        for fn in self.fns:
            if fn.applies(dt) and any(n == kernel for _, n in self._uses(fn)):
                return fn
        raise GenError(f"no function of {dt.name} uses kernel '{kernel}'")

    def ret_cuda_type(self, kernel, dt, dtypes):
        """The CUDA element type of the tensor the functions of dt using
        kernel return ("" when none returns one)."""
        by_name = {d.name: d for d in dtypes}
        for fn in self.fns:
            if fn.applies(dt) and any(n == kernel for _, n in self._uses(fn)):
                for inst in fn.instances(dtypes):
                    rd = inst.ret_dtype(dt, by_name)
                    if rd is not None:
                        return rd.cuda_type
        return ""

    def cuda_headers(self, dt, dtypes, source):
        """The device headers dt's launchers of one source call into, each once."""
        return list(dict.fromkeys(u.kernel.header for u in self.cuda_uses(dt, dtypes, source)))

    def cuda_uses(self, dt, dtypes, source=None):
        """dt's CUDA launchers (of one source file, or all)."""
        return [u for u in self.kernel_uses(dt, dtypes) if u.kernel.cuda and source in (None, u.kernel.source)]

    def cpu_uses(self, acc, dtypes, part=None):
        """The CPU kernels of accumulation type acc that some dtype
        accumulating in it uses (of one template part, or all), in registry order."""
        names, out = set(), []
        for dt in dtypes:
            if dt.accum_type == acc.c_type:
                names.update(u.name for u in self.kernel_uses(dt, dtypes) if u.kernel.cpu)
        # registry order, but a kernel after the ones it needs (their
        # helpers are its own)
        def visit(k):
            if k in out:
                return
            for n in k.needs:
                visit(self.kernels[n])
            out.append(k)
        for k in self.kernels.values():
            if k.cpu and k.name in names:
                visit(k)
        return [k for k in out if part in (None, k.cpu)]


def _group_order(path):
    return os.path.basename(path)


def test_programs(srcdir):
    """The names of the test programs in t/ (t-*.c, t-*.sh), any folder
    deep; None when there is no t/ (a copy of the generator's inputs alone),
    and then the tests entries name go unchecked."""
    if not os.path.isdir(os.path.join(srcdir, "t")):
        return None
    names = set()
    for path in glob.glob(os.path.join(srcdir, "t", "**", "t-*.*"), recursive=True):
        base, ext = os.path.splitext(os.path.basename(path))
        if ext in (".c", ".sh"):
            names.add(base)
    return names
