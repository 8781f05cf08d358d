"""Every output of the generator and the template that renders it: the one
place this map is written.  configure asks for the list (tendo-gen
--list), the Makefile for the inputs (tendo-gen --inputs), and a release
tarball ships the outputs with the list beside them (gen/shipped-outputs).

Scopes:
    once     one file
    dtype    one per dtype: {dt}
    group    one per registry group and dtype that has any of its functions: {group}, {dt}
    cpu      one per CPU kernel template and accumulation type that has any of
             its kernels: {part}, {acc}
    cuda     one per CUDA source and dtype that has any of its launchers
             (CUDA builds only): {source}, {dt}
    cuda1    one file, in CUDA builds only
    docs     one file about every dtype of gen/dtypes.toml, whatever this build has
"""

import dataclasses

from .dtypes import accums_of
from .model import CPU_PARTS, CUDA_SOURCES

OUTPUTS = (
    # the public headers: the _Generic front, the dtype enum, one header per dtype
    ("include/tendo.h", "templates/api/tendo.h.j2", "once"),
    ("include/tendo/dtype.h", "templates/api/dtype.h.j2", "once"),
    ("include/tendo/tensor_{dt}.h", "templates/api/tensor.h.j2", "dtype"),
    # the typed entry points of each registry group, and the dtype table
    ("src/gen/{group}_{dt}.c", "templates/api/entry.c.j2", "group"),
    ("src/gen/traits.c", "templates/api/traits.c.j2", "once"),
    ("src/gen/convert.h", "templates/api/convert.h.j2", "once"),
    # the CPU kernels of each accumulation type
    ("src/gen/cpu_kernels.h", "templates/cpu/kernels.h.j2", "once"),
    ("src/gen/cpu_{part}_{acc}.c", "templates/cpu/{part}.c.j2", "cpu"),
    # the CUDA launchers (declared in every build), element layer and kernels
    ("src/gen/cuda_launchers.h", "kernels/templates/launchers.h.j2", "once"),
    ("src/gen/cuda_types.h", "kernels/templates/types.h.j2", "once"),
    ("src/gen/cuda_elements.cuh", "kernels/templates/elements.cuh.j2", "cuda1"),
    ("src/gen/cuda_{source}_{dt}.cu", "kernels/templates/{source}.cu.j2", "cuda"),
    # the tests' tables
    ("t/each-dtype.h", "templates/t/each-dtype.h.j2", "once"),
    ("t/ops-table.h", "templates/t/ops-table.h.j2", "once"),
    ("t/fault-table.h", "templates/t/fault-table.h.j2", "once"),
    # the coverage matrix, published as docs/ops.md
    ("docs/ops.md", "templates/docs/ops.md.j2", "docs"),
)


@dataclasses.dataclass(frozen=True)
class Output:
    path: str
    template: str
    dt: object = None      # the Dtype of a per-dtype output
    acc: object = None     # the Accum of a cpu output
    group: str = ""
    part: str = ""         # the CPU kernel template of a cpu output
    source: str = ""       # the CUDA source of a cuda output
    docs: bool = False     # about every dtype of the table


def outputs(reg, dtypes, cuda=False):
    """Every Output for these dtypes (reg pruned to them), in OUTPUTS order."""
    out = []
    for path, tmpl, scope in OUTPUTS:
        if scope in ("once", "docs") or (scope == "cuda1" and cuda):
            out.append(Output(path, tmpl, docs=scope == "docs"))
        elif scope == "dtype":
            out += [Output(path.format(dt=d.name), tmpl, dt=d) for d in dtypes]
        elif scope == "group":
            out += [Output(path.format(group=g, dt=d.name), tmpl, dt=d, group=g)
                    for g in reg.groups for d in dtypes if reg.group_items(g, d, dtypes)]
        elif scope == "cpu":
            out += [Output(path.format(part=p, acc=a.name), tmpl.format(part=p), acc=a, part=p)
                    for p in CPU_PARTS for a in accums_of(dtypes) if reg.cpu_uses(a, dtypes, p)]
        elif scope == "cuda" and cuda:
            out += [Output(path.format(source=s, dt=d.name), tmpl.format(source=s), dt=d, source=s)
                    for s in CUDA_SOURCES for d in dtypes if reg.cuda_uses(d, dtypes, s)]
    return out
