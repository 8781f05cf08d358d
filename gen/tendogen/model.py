"""The registry's data classes: a function (Fn) and its C functions
(Instance), its params (Param), a kernel (Kernel) and a kernel as one dtype
uses it (KernelUse); what their fields mean is docs/registry.md's."""

import dataclasses
import re

from . import GenError
from .dtypes import KINDS, float_suffix

# What a param KIND becomes in C; {T} is the tensor type, {E} the element type.
PARAM_KINDS = {
    "tensor": "{T} *",
    "ctensor": "const {T} *",
    "ctensor_opt": "const {T} *",
    "data": "const {E} *",
    "out_data": "{E} *",
    "ctensor_bool": "const tensor_bool *",
    "ctensor_i64": "const tensor_i64 *",
    "ctensor_i32": "const tensor_i32 *",
    "tensor_i32": "tensor_i32 *",  # written (matmul_i32_out's out)
    "ctensors": "const {T} *const *",  # an array (cat, stack): must be the first param
    "out_tensor": "{T} **",
    "out_tensor_i64": "tensor_i64 **",
    "erased": "tendo_tensor *",  # a type-erased handle (tendo/erased.h)
    "state": "{S} *",  # written state of the dtype's accumulation dtype (an optimizer's moments); may be NULL
}
# Tensors of the dtype the function is generated for (the generic macro
# dispatches on the first of these), and tensors of one fixed dtype.
TENSOR_KINDS = ("tensor", "ctensor", "ctensor_opt", "ctensors")
FIXED_TENSOR_KINDS = {"ctensor_bool": "bool", "ctensor_i64": "i64", "ctensor_i32": "i32", "tensor_i32": "i32"}
# The tensor params a function may write into (a `writes` param is one).
WRITABLE_KINDS = ("tensor", "state", "tensor_i32")
# Where a function stores new tensors it returns besides its result (sort's
# values and indices; the caller frees them, a NULL pointer skips one): of
# the function's own dtype (out_tensor) or of a fixed dtype.
OUT_TENSOR_KINDS = {"out_tensor": None, "out_tensor_i64": "i64"}
# What a `ret` may say besides a C type: a new tensor of the function's own
# dtype; of a sum (own for a float, i64 otherwise); of a fixed dtype.
RET_KINDS = {"tensor": None, "tensor_sum": None, "tensor_bool": "bool", "tensor_i64": "i64", "tensor_i32": "i32"}

# The ABIs of CUDA launchers (src/core/launch.h): the macro that declares one.
CUDA_ABIS = {"loop": "TENDO__CU_LOOP", "rows": "TENDO__CU_ROWS", "rand": "TENDO__CU_RAND",
             "scatter_add": "TENDO__CU_SCATTER_ADD", "optim": "TENDO__CU_OPTIM"}
# The CPU kernel templates (templates/cpu/<part>.c.j2, one output per
# accumulation type) and the per-dtype CUDA sources (kernels/templates/<source>.cu.j2).
CPU_PARTS = ("reduce", "order", "optim")
CUDA_SOURCES = ("ops", "reduce", "order")
# The device header (kernels/) a kernel of each source calls into, unless
# its entry names another.
CUDA_HEADERS = {"ops": "elementwise.cuh", "reduce": "rows.cuh", "order": "order.cuh"}

# The devices a function is checked or refused on (coverage), and how a
# `refuse` rule reads: "always", or "no FIELD" (the dtypes whose FIELD of
# gen/dtypes.toml is empty).
DEVICES = ("cpu", "cuda")

PLACEHOLDER = re.compile(r"\{(cpu|cuda):([A-Za-z_][A-Za-z0-9_{}]*)\}|\{(DT|RET_DT)\}")


def expr_for(exprs, dt):
    """The expression of a per-kind set {"": float, "int": .., "uint": ..,
    "bool": ..} for dtype dt, {T} and {U} replaced: uint and bool fall back
    to int, int to the float form."""
    e = exprs.get("", "")
    if not dt.is_float:
        e = exprs.get("int") or e
    if dt.kind == "uint":
        e = exprs.get("uint") or e
    if dt.is_bool:
        e = exprs.get("bool") or e
    return float_suffix(e.replace("{T}", dt.compute_type).replace("{U}", dt.wrap_type), dt.compute_type)


@dataclasses.dataclass(frozen=True)
class Param:
    kind: str
    name: str

    def c_decl(self, dt, suffix=""):
        ctype = PARAM_KINDS.get(self.kind, self.kind)
        ctype = ctype.replace("{T}", dt.tensor).replace("{E}", dt.c_type)
        if self.is_state:
            ctype = ctype.replace("{S}", f"tensor_{dt.state_dtype}")
        sep = "" if ctype.endswith("*") else " "
        return f"{ctype}{sep}{self.name}{suffix}"

    @property
    def is_tensor(self):
        """A tensor of the function's own dtype."""
        return self.kind in TENSOR_KINDS

    @property
    def fixed_dtype(self):
        """The dtype name of a tensor param of a fixed dtype, else None."""
        return FIXED_TENSOR_KINDS.get(self.kind)

    @property
    def is_state(self):
        """A tensor of the dtype's accumulation dtype that the function
        writes (f32 for f32 and the narrow floats, f64 for f64)."""
        return self.kind == "state"

    @property
    def is_out(self):
        """Where the function stores a new tensor (an out_tensor kind)."""
        return self.kind in OUT_TENSOR_KINDS

    @property
    def out_dtype(self):
        """The fixed dtype name of an out_tensor kind; None: the function's own."""
        return OUT_TENSOR_KINDS.get(self.kind)

    @property
    def is_any_tensor(self):
        return self.is_tensor or self.fixed_dtype is not None or self.is_out or self.is_state

    @property
    def core_decl(self):
        """How a `call` sees this param, when it is a tensor: the core
        type it is declared as, and the conversion from the typed one."""
        if self.kind in WRITABLE_KINDS:
            return "tendo__tensor *", f"(tendo__tensor *)(void *){self.name}_"
        if self.kind == "ctensors":
            return "const tendo__tensor *const *", f"(const tendo__tensor *const *)(const void *){self.name}_"
        return "const tendo__tensor *", f"(const tendo__tensor *)(const void *){self.name}_"


@dataclasses.dataclass(frozen=True)
class Instance:
    """One C function of a Fn: the Fn itself, or one per target dtype."""
    fn: "Fn"
    name: str
    ret: str
    doc: str
    to: object  # the target Dtype of a per_target fn, else None

    def c_name(self, dt):
        return self.fn.symbol.format(dt=dt.name, name=self.name_for(dt))

    def name_for(self, dt):
        """The name, {dt} filled in (as_{dt} -> as_f32): what errors call it."""
        return self.name.replace("{dt}", dt.name)

    def doc_for(self, dt):
        return self.doc.replace("{dt}", dt.name)

    def c_ret(self, dt):
        return self.fn.c_ret(dt, self.ret)

    def head(self, dt, suffix=""):
        """The C declarator: `RET tensor_<dt>_<name>(PARAMS)`; suffix is
        appended to the names of tensor params (a call's definition sees
        them under their own names as core tensors)."""
        ret = self.c_ret(dt)
        params = ", ".join(p.c_decl(dt, suffix if p.is_any_tensor else "") for p in self.fn.params) or "void"
        return f"{ret}{'' if ret.endswith('*') else ' '}{self.c_name(dt)}({params})"

    def ret_dtype(self, dt, by_name):
        """The Dtype of the tensor it returns (None for other returns)."""
        return self.fn.ret_dtype(dt, self.ret, by_name)

    def kernels(self):
        """The kernel instances it uses, by name ({to} filled in)."""
        names = [m.group(2) for m in PLACEHOLDER.finditer(self.fn.call) if m.group(2)]
        names += list(self.fn.kernels)
        return [self._target(n) for n in names]

    def _target(self, s):
        return s.replace("{to}", self.to.name) if self.to else s

    def call_expr(self, dt, by_name):
        """The C expression of a `call` for dtype dt, its placeholders
        replaced: {cpu:K} the CPU kernel of dt's accumulation type,
        {cuda:K} dt's launcher of K (NULL without CUDA), {DT} dt's enum,
        {RET_DT} the result's."""
        def sub(m):
            if m.group(1) == "cpu":
                return f"tendo__{self._target(m.group(2))}_{dt.ct}"
            if m.group(1) == "cuda":
                return f"TENDO__CU({launcher_name(self._target(m.group(2)), dt)})"
            if m.group(3) == "DT":
                return dt.enum
            rd = self.ret_dtype(dt, by_name)
            if rd is None:
                raise GenError(f"{self.fn.origin}: {{RET_DT}} in a function that returns no tensor")
            return rd.enum
        return PLACEHOLDER.sub(sub, self._target(self.fn.call))


@dataclasses.dataclass(frozen=True)
class Fn:
    name: str
    ret: str
    params: tuple
    doc: str
    generic: bool
    group: str
    origin: str  # where it is declared, for messages
    kinds: tuple = KINDS
    dtypes: tuple = ()  # only these dtypes of its kinds (empty: all)
    per_target: bool = False
    sample: tuple = ()  # (param name, value) pairs: the fault sweep's call
    overloads: tuple = ()  # (dtype, fn name) pairs
    call: str = ""  # the entry point returns this C expression (see Instance.call_expr)
    body: str = ""  # or a macro of templates/api/<group>.j2 writes it
    kernels: tuple = ()  # kernels a body uses (a call names its own)
    observe: bool = False  # a call whose result is an op event (views, copies)
    exprs: tuple = ()  # (kind, expression) pairs a body computes with (expr_for)
    fill: str = ""  # the `filled` body's value, a C double expression
    refuse: tuple = ()  # (device, rule) pairs: where it is refused (fails with refuse_with)
    refuse_with: str = "TENDO_ERR_UNSUPPORTED"
    exact: bool = True  # a float result is the same bits on every device (not a sum in another order)
    values: bool = True  # its result's values are defined (not empty's)
    test: tuple = ()  # the test programs that value-check it on the CPU
    grad: object = ""  # its derivatives: {param: formula}, "none", or "" (see tendogen/grad.py)
    writes: str = ""  # the tensor param it writes into (an _out form, copy_into)
    op: object = None  # the op family entry it comes from, if any
    symbol: str = "tensor_{dt}_{name}"  # its C name

    def applies(self, dt):
        return dt.kind in self.kinds and (not self.dtypes or dt.name in self.dtypes)

    def own(self, dtypes):
        """The dtypes of dtypes it exists for."""
        return [dt for dt in dtypes if self.applies(dt)]

    def instances(self, dtypes):
        if not self.per_target:
            return [Instance(self, self.name, self.ret, self.doc, None)]
        return [Instance(self, self.name.format(to=t.name), self.ret.format(to=t.name),
                         self.doc.format(to=t.name), t) for t in dtypes]

    def c_ret(self, dt, ret):
        if ret == "tensor" or (ret == "tensor_sum" and dt.is_float):
            return f"{dt.tensor} *"
        if ret == "tensor_sum":
            return "tensor_i64 *"
        if ret in RET_KINDS:
            return f"tensor_{RET_KINDS[ret]} *"
        return ret.replace("E *", f"{dt.c_type} *")

    def ret_dtype(self, dt, ret, by_name):
        if ret == "tensor" or (ret == "tensor_sum" and dt.is_float):
            return dt
        if ret == "tensor_sum":
            return by_name["i64"]
        if ret in RET_KINDS:
            return by_name[RET_KINDS[ret]]
        m = re.fullmatch(r"tensor_(\w+) \*", ret)
        return by_name.get(m.group(1)) if m else None

    def expr_for(self, dt):
        return expr_for(dict(self.exprs), dt)

    def refused(self, device, dt):
        """Whether it fails with TENDO_ERR_UNSUPPORTED on device for dt."""
        rule = dict(self.refuse).get(device)
        if rule is None:
            return False
        if rule == "always":
            return True
        return not getattr(dt, rule.split(" ", 1)[1])

    @property
    def last_tensor_param(self):
        """Index of the last tensor parameter (generic macros name the
        params up to it and pass the rest as __VA_ARGS__)."""
        return max(i for i, p in enumerate(self.params) if p.is_any_tensor)

    @property
    def dispatch(self):
        """The param a generic macro dispatches on: the first tensor of the
        function's own dtype."""
        return next(p for p in self.params if p.is_tensor)

    @property
    def overload_param(self):
        """The fixed-dtype param whose dtype picks among the overloads of
        the generic macro, or None."""
        if not self.overloads:
            return None
        return next(p for p in self.params if p.fixed_dtype)

    def overload_choices(self):
        """(dtype, fn name) for the generic macro's choice on
        overload_param's dtype: this fn for its own dtype, then the overloads."""
        return ((self.overload_param.fixed_dtype, self.name),) + self.overloads


@dataclasses.dataclass(frozen=True)
class Kernel:
    """A kernel: a section of templates/cpu/<cpu>.c.j2 rendered once per
    accumulation type as tendo__<name>_<acc> (declared from `signature`),
    and/or a CUDA launcher tendo__cu_<name>_<dt> of ABI `cuda` in
    src/gen/cuda_<source>_<dt>.cu, its body `cuda_body` or the template's
    macro `macro`."""
    name: str
    origin: str
    cpu: str = ""
    signature: str = ""
    cuda: str = ""
    source: str = ""
    cuda_body: str = ""
    header: str = ""  # the device header (kernels/) its launcher calls into
    macro: str = ""
    needs: tuple = ()
    per_target: bool = False
    doc: str = ""
    op: object = None  # the op family entry of a family kernel

    def instances(self, dtypes):
        """(name, target) for each kernel it stands for."""
        if not self.per_target:
            return [(self.name, None)]
        return [(self.name.format(to=t.name), t) for t in dtypes]

    def cpu_decl(self, acc):
        """The C declaration of its CPU kernel for accumulation type acc."""
        ret, args = self.signature.split("(", 1)
        ret = ret.strip()
        return f"{ret}{'' if ret.endswith('*') else ' '}tendo__{self.name}_{acc.name}({args}"

    def abi(self):
        return CUDA_ABIS[self.cuda]


@dataclasses.dataclass(frozen=True)
class KernelUse:
    """A kernel as one dtype uses it: the kernel, its (target-filled) name
    and the target dtype of a per_target kernel."""
    kernel: Kernel
    name: str
    to: object

    def launcher(self, dt):
        return launcher_name(self.name, dt)

    def body(self, dt, by_name, ret):
        """The inline launcher body for dt; ret: the result dtype's
        CUDA element type, for {RET_CU}."""
        k = self.kernel
        subs = {"CU": dt.cuda_type, "CT": dt.compute_type, "ACC": dt.accum_type, "RET_CU": ret,
                "SCAN_ACC": dt.scan_acc, "SCAN_ROUND": dt.scan_round}
        return re.sub(r"\{(\w+)\}", lambda m: subs[m.group(1)], k.cuda_body)


def launcher_name(kernel, dt):
    """The one place a CUDA launcher's C name is spelled."""
    return f"tendo__cu_{kernel}_{dt.name}"
