"""tendo-gen: render tendo's generated sources from gen/dtypes.toml,
gen/registry/*.toml and the templates.

    tendo-gen [--srcdir DIR] [--dtypes LIST] [--cuda] --list
    tendo-gen [--srcdir DIR] --inputs
    tendo-gen [--srcdir DIR] [--dtypes LIST] [--cuda] (--all | OUTPUT...)

--dtypes defaults to every dtype of gen/dtypes.toml; bool, i64 and f32 can never
be left out (comparisons give bool tensors, indices and integer sums i64,
and f32 is the float the tendo program, the examples and the tests use).
--list prints every output for those dtypes (the CUDA sources only with
--cuda), --inputs every file the outputs are made from (tables,
templates, this generator).  Otherwise the named outputs (paths relative
to the current directory, the build tree), or all of them, are rendered;
a file is written only when its contents change.  The tables are validated
before anything is written, and output is deterministic: the same inputs
give byte-identical files.
"""

import argparse
import glob
import os
import sys
import tomllib

import jinja2

from . import GenError
from .dtypes import load_dtypes, select_dtypes
from .fixtures import sample_calls
from .outputs import outputs
from .registry import Registry, test_programs
from .render import environment, render, write_if_changed


def inputs(srcdir):
    """Every file an output may be made from, relative to srcdir, sorted."""
    pats = ["gen/tendo-gen", "gen/dtypes.toml", "gen/registry/*.toml", "gen/tendogen/*.py",
            "templates/**/*.j2", "kernels/templates/*.j2"]
    files = {os.path.relpath(p, srcdir) for pat in pats
             for p in glob.glob(os.path.join(srcdir, pat), recursive=True)}
    return sorted(files)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--srcdir", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--dtypes", default="", help="comma-separated dtypes (default: every dtype in gen/dtypes.toml)")
    ap.add_argument("--cuda", action="store_true", help="include the CUDA sources")
    ap.add_argument("--list", action="store_true", help="print the outputs and exit")
    ap.add_argument("--inputs", action="store_true", help="print the inputs and exit")
    ap.add_argument("--all", action="store_true", help="render every output")
    ap.add_argument("outputs", nargs="*")
    args = ap.parse_args(argv)
    try:
        if args.inputs:
            print(" ".join(inputs(args.srcdir)))
            return 0
        all_dtypes = load_dtypes(os.path.join(args.srcdir, "gen", "dtypes.toml"))
        full = Registry.load(os.path.join(args.srcdir, "gen", "registry"), test_programs(args.srcdir))
        dtypes = select_dtypes(all_dtypes, args.dtypes or ",".join(d.name for d in all_dtypes))
        reg = full.prune(dtypes)
        all_reg = full.prune(all_dtypes)
        sample_calls(reg, dtypes)  # every function must have a sample call
        # --list and --all always list the CUDA outputs with --cuda; a named
        # output is found in the CUDA list too
        outs = {o.path: o for o in outputs(reg, dtypes, args.cuda or bool(args.outputs))}
        if args.list:
            print(" ".join(o for o in outs))
            return 0
        wanted = list(outs) if args.all else args.outputs
        seen = set()
        for path in wanted:
            key = os.path.normpath(path).replace(os.sep, "/")
            if key in seen:
                raise GenError(f"'{path}' named twice")
            seen.add(key)
            if key not in outs:
                raise GenError(f"don't know how to make '{path}' for dtypes {','.join(d.name for d in dtypes)} "
                               f"(tendo-gen --list names every output)")
        env = environment(args.srcdir)
        for path in wanted:
            out = outs[os.path.normpath(path).replace(os.sep, "/")]
            write_if_changed(path, render(env, args.srcdir, out, reg, dtypes, all_dtypes, all_reg))
    except (GenError, OSError, tomllib.TOMLDecodeError, jinja2.TemplateError) as e:
        print(f"tendo-gen: {e}", file=sys.stderr)
        return 1
    return 0


