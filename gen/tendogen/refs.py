"""The tests' references: each op's `ref` is one C expression in double
over its operands, <math.h> and literals, sharing no code with what it
checks.  check_ref refuses anything else, naming the offending token."""

import re

from . import GenError

# What a reference may name, besides its operands: <math.h>'s double
# functions and constants.  Not the library's helpers (src/core/scalar.h)
# nor float functions (expf): a reference shares no code with what it checks.
REF_FUNCS = frozenset("""
    acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1
    ilogb ldexp log log10 log1p log2 logb scalbn cbrt fabs hypot pow sqrt erf erfc
    lgamma tgamma ceil floor nearbyint rint round trunc fmod remainder copysign
    nextafter fdim fmax fmin fma isnan isinf isfinite signbit
""".split())
REF_CONSTS = frozenset(("NAN", "INFINITY", "HUGE_VAL"))
REF_TOKEN = re.compile(r"\s*(?:(?P<num>0[xX][0-9A-Fa-f.]+(?:[pP][+-]?\d+)?[lLuU]*"
                       r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFlLuU]*)"
                       r"|(?P<id>[A-Za-z_]\w*)|(?P<op>[-+*/%<>=!&|?:(),~^]))")


def check_ref(text, names, where):
    """A reference: one C expression in double over names, <math.h> and literals."""
    if not text.strip():
        raise GenError(f"{where}: is empty")
    pos, depth, toks = 0, 0, []
    while pos < len(text.rstrip()):
        m = REF_TOKEN.match(text, pos)
        if not m:
            raise GenError(f"{where}: '{text[pos:].strip()[:1]}' has no place in a C expression")
        pos = m.end()
        toks.append((m.lastgroup, m.group(m.lastgroup)))
    for i, (kind, tok) in enumerate(toks):
        after = toks[i + 1][1] if i + 1 < len(toks) else ""
        if kind == "num" and re.search(r"[fF]$", tok) and not tok.lower().startswith("0x"):
            raise GenError(f"{where}: '{tok}' is a float literal; a reference computes in double")
        if kind == "id" and after == "(":
            if tok not in REF_FUNCS:
                raise GenError(f"{where}: calls '{tok}', which is not a double function of "
                               "<math.h> (a reference must not share the library's code)")
        elif kind == "id" and tok not in names and tok not in REF_CONSTS:
            raise GenError(f"{where}: names '{tok}', which is none of its operands "
                           f"({', '.join(names) or 'it has none'}) nor a <math.h> constant")
        depth += (tok == "(") - (tok == ")")
        if depth < 0:
            break
    if depth:
        raise GenError(f"{where}: unbalanced parentheses")
