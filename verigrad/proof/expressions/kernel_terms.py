"""Building the kernel terms that expressions compile to.

The bottom of the expression layer: functions of kernel terms and size polynomials
only (no expression node). A compiled node is built from these: a comprehension with
fresh index names (``lam``), a sum over a fresh index (``sum_over``), an entry read
so that it reads like the mathematics (``at``), NumPy broadcasting of symbolic shapes,
and the real term of an integer expression given by cases (``int_term``).
"""
from __future__ import annotations

import itertools

from verigrad.frontends import ops
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, Poly, as_poly, poly_str

from ..errors import ProofError


def shape_str(shape) -> str:
    """``(n, d + 1)``: a shape as text, for messages."""
    return "(" + ", ".join(poly_str(s) for s in shape) + ")"


def broadcast(shapes, what):
    """NumPy broadcasting of symbolic shapes (trailing axes aligned, sizes equal or 1)."""
    out: list = []
    for sh in shapes:
        sh = list(sh)
        if len(sh) > len(out):
            out = sh[:len(sh) - len(out)] + out
        for k in range(1, len(sh) + 1):
            a, b = out[-k], sh[-k]
            if a is b or b is Poly.const(1):
                continue
            if a is Poly.const(1):
                out[-k] = b
                continue
            raise ProofError(f"{what}: shapes {', '.join(shape_str(s) for s in shapes)} do not broadcast")
    return tuple(out)


# -- index names --------------------------------------------------------------------------

_names_memo: dict = {}


def index_names(t: T.Term) -> frozenset:
    """Names of the index variables of a term, free or bound (memoized: terms are
    immutable and interned)."""
    hit = _names_memo.get(t)
    if hit is None:
        hit = _names_memo[t] = frozenset(ops.index_names(t))
    return hit


def index_vars_by_name(t: T.Term) -> dict:
    """Every index variable of a term (free or bound), by name."""
    out: dict = {}
    seen, stack = set(), [t]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, IndexVar):
            out.setdefault(x.name, set()).add(x)
        elif isinstance(x, Poly):
            for v in x.index_vars():
                out.setdefault(v.name, set()).add(v)
        elif isinstance(x, T.Term):
            stack.extend(x._args)
        elif isinstance(x, tuple):
            stack.extend(x)
    return out


PREFERRED_NAMES = "ijklabcdpqrstuvw"
SPARE_NAMES = tuple(f"{c}{n}" for n in range(1, 100) for c in PREFERRED_NAMES)


def pick_indices(sizes, used, prefer=PREFERRED_NAMES) -> list:
    """Fresh index variables over ``sizes``, named by ``prefer`` (then spare names) and
    avoiding the names in ``used``."""
    out = []
    used = set(used)
    for s in sizes:
        for ch in itertools.chain(prefer, SPARE_NAMES):
            if ch not in used:
                used.add(ch)
                out.append(IndexVar(ch, as_poly(s)))
                break
    return out


# -- comprehensions, sums, entries --------------------------------------------------------

def lam(shape, body_fn, *avoid) -> T.Term:
    """``Lamda[i..](body_fn(i..))`` with index names no term of ``avoid`` uses; the body
    must be built from those terms and the new indices only (then nothing is captured)."""
    used = set().union(*[index_names(a) for a in avoid]) if avoid else set()
    vs = pick_indices(shape, used)
    return T.Lamda(vs, body_fn(*vs))


def sum_over(size, body_fn, *avoid, prefer="jlcpqrst") -> T.Term:
    """``Sum[j:size](body_fn(j))`` with a name no term (or index variable) of ``avoid``
    uses."""
    used = set().union(*[index_names(a) for a in avoid if isinstance(a, T.Term)])
    used |= {v.name for v in avoid if isinstance(v, IndexVar)}
    (v,) = pick_indices([size], used, prefer)
    return T.Sum(v, body_fn(v))


def at(t: T.Term, *idx) -> T.Term:
    """``t[idx]`` as a kernel term: a comprehension is beta-reduced and nested strict
    indexing flattened, so compiled statements read like the mathematics."""
    if isinstance(t, T.Index) and not t.total and not isinstance(t.base, T.Lamda):
        return T.Index(t.base, t.idx + tuple(as_poly(e) for e in idx))
    return ops.at(t, *idx)


# -- integer expressions by cases ---------------------------------------------------------

def weight_product(*ws):
    """The product of case weights (kernel 0/1 terms; None is 1)."""
    ws = [w for w in ws if w is not None]
    if not ws:
        return None
    return ws[0] if len(ws) == 1 else T.Mul(tuple(ws))


def int_term(cases) -> T.Term:
    """The real term of an integer expression given by cases ``[(weight, poly)]``."""
    parts = []
    for w, p in cases:
        v = T.IntVal(p)
        parts.append(v if w is None else T.Mul((w, v)))
    return parts[0] if len(parts) == 1 else T.Add(tuple(parts))
