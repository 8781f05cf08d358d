"""tendogen: tendo's generator, behind gen/tendo-gen.

It reads the dtype table (gen/dtypes.toml) and the registry of functions
(gen/registry/*.toml), validates both into the data classes of dtypes.py
and registry.py, and renders the templates that outputs.py maps to every
output file.  The modules, in the order they are used:

    dtypes.py    the dtype table: fields, defaults by kind, casts
    model.py     a function, its params and C functions, a kernel
    ops.py       the op families ([[binary]], [[unary]], [[reduction]])
    refs.py      the checks of the tests' double references
    registry.py  loading and validating gen/registry/; what exists for which dtype
    fixtures.py  the allocation-failure sweep's sample calls (t/fault-table.h)
    outputs.py   every output, the template that renders it, and its scope
    lines.py     #line directives pointing generated code back at templates
    render.py    the Jinja environment; files written only when they change
    cli.py       the command line (gen/tendo-gen)
"""


class GenError(Exception):
    """A table, template or request the generator refuses, with the reason."""
