"""Rendering: one Jinja environment over the source tree (templates are
named by their path in it: templates/api/tensor.h.j2), StrictUndefined,
deterministic output, #line directives back to the templates, and files
written only when their contents change, so that touching one template
rebuilds only what it produces."""

import os
import re

import jinja2

from . import GenError
from .dtypes import accums_of, cast, cuda_elements
from .fixtures import DATA_ELEMS, fixtures, sample_calls
from .grad import Compiler, kind_of
from .lines import LineMarkingLoader, add_line_directives
from .model import expr_for, launcher_name
from .ops import Op

OP_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\bop\b')


def environment(srcdir):
    env = jinja2.Environment(
        loader=LineMarkingLoader(srcdir),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.tests["contains"] = lambda seq, item: item in seq
    env.tests["op"] = lambda x: isinstance(x, Op)
    return env


def uses_op(call):
    """Whether C expression call names `op` (outside string literals)."""
    return any(m.group() == "op" for m in OP_TOKEN.finditer(call))


def render(env, srcdir, out, reg, dtypes, all_dtypes, all_reg):
    """The text of Output out."""
    ds = all_dtypes if out.docs else dtypes
    r = all_reg if out.docs else reg
    by_name = {d.name: d for d in ds}
    bodies = f"templates/api/{out.group}.j2" if out.group else ""
    done = set()

    def once(key):
        """True the first time a template asks, per output (helpers a
        macro writes once per file)."""
        first = key not in done
        done.add(key)
        return first

    g = grad_globals(r, ds, out.dt, by_name)
    text = env.get_template(out.template).render(**g,
        out=out, dt=out.dt, acc=out.acc, group=out.group, part=out.part, source=out.source,
        dtypes=ds, accums=accums_of(ds), cuda_elements=cuda_elements(ds), reg=r, by_name=by_name,
        template=out.template, cast=cast, launcher=launcher_name, expr_for=expr_for,
        sample_calls=lambda: sample_calls(r, ds), fixtures=fixtures(ds), data_elems=DATA_ELEMS,
        bodies_name=bodies if bodies and os.path.exists(os.path.join(srcdir, bodies)) else "",
        uses_op=uses_op, once=once)
    if out.path.startswith(("include/", "docs/")):
        # installed headers and docs: a user's compiler has no templates to point at
        return add_line_directives(text, None)
    return add_line_directives(text, lambda name: os.path.join(srcdir, name))


def grad_globals(reg, dtypes, dt, by_name):
    """What templates/api/entry.c.j2, its bodies and templates/api/grad.j2
    ask about autograd, for dtype dt: which entry points are wrapped (and so
    written by the bodies as static tendo__fwd_<name>), and their plans."""
    comp = Compiler(reg, dtypes)
    insts = {i.name_for(dt): i for i in reg.instances(dt, dtypes)} if dt is not None else {}

    def kind(i):
        return kind_of(i, dt, by_name)

    def name(n):
        i = insts[n]
        return ("tendo__fwd_" if kind(i) else "") + i.c_name(dt)

    def head(i, suffix=""):
        h = i.head(dt, suffix)
        return h if not kind(i) else "static " + h.replace(f"{i.c_name(dt)}(", f"tendo__fwd_{i.c_name(dt)}(", 1)

    def wrapped(item):
        if isinstance(item, Op):
            return [insts[n] for n in (item.name, item.name + "_out", item.name + "_scalar")
                    if n in insts and insts[n].fn.op is item and kind(insts[n])]
        return [item] if kind(item) else []

    def array_count(fn, pname):
        if any(p.name == "ndim" and p.kind == "int" for p in fn.params):
            return "ndim"
        t = next(p for p in fn.params if p.is_tensor)
        return f"((const tendo__tensor *)(const void *){t.name})->ndim"

    return dict(grad_kind=kind, grad_plan=lambda i: comp.plan(i, dt), entry_head=head, entry_name=name,
                entry_static=lambda n: "static " if kind(insts[n]) else "", wrapped_instances=wrapped,
                array_count=array_count)


def write_if_changed(path, text):
    """Writes text to path unless path already holds exactly it; True when written."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            if f.read() == text:
                return False
    except FileNotFoundError:
        pass
    except OSError as e:
        raise GenError(f"{path}: {e.strerror}")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)
    return True
