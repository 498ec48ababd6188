"""Float constants read exactly where values of the indices decide (untrusted; red team RT-36).

A float constant is read as the simplest number within 4 ulps of it
(``jaxpr_scalar.reading``: ``1 - 0.9`` is 1/10, so the programmer's identities hold). On
data that moves a threshold or a kink by a few ulps, a rounding-scale effect the
certificate states. A *discrete* value, though -- one computed from indices, sizes,
integer or boolean values and constants alone, so that it does not vary with the real
inputs -- is decided at once for every input: float32(0.0009999999) read as 1/1000 made
``[i * C >= 1]`` switch at i = 1000, where exact arithmetic on C and XLA switch at 1001,
and a backward switching at 1000 was PROVED, wrong at index 1000 for every input.

So every discrete value with a constant read inexactly has a *twin*: the same value with
each float constant read as the rational it is (``ExactFloat``). The twin is built on
demand by running the equation's rule again on its operands' twins. A rule that decides
something of its operands reads their twins instead of them:

- comparisons, ``sign``, conversions to integers and booleans, ``rem``, orders
  (``argmax``, ``sort``, ``top_k``), ``is_finite``, and every primitive not listed as
  smooth below;
- a pole: the divisor of ``div``, the argument of ``log``, ``log1p``, ``sqrt``, ``rsqrt``,
  a negative ``integer_pow``, the base of ``pow``, when it is discrete, not a constant, and
  not known positive (non-negative for ``sqrt`` and ``log1p``): where its reading is 0 and
  its exact value is not, the value and its finiteness would jump.

A smooth rule (sums, products, selects, moves of entries, ``exp``, max, ...) keeps the
readings, whose values differ from the exact ones by a few ulps at most: ``(1 - 0.1) *
onehot + 0.1 / k`` still sums to one. Integer and boolean values need no twin: their
constants are integers, and a decision makes them from twins.

A value that depends on real inputs only through an algebraic cancellation (``x - x +
i * C``) is not discrete here: its comparison reads the constant as the reading.
"""
from __future__ import annotations

import numpy as np

from verigrad.kernel import KernelError

from .jaxpr_core import Tensor, array_const, where_of
from .jaxpr_errors import JaxprImportError
from . import jaxpr_scalar as S

# rules that inline a body: the body's equations are interpreted (and twinned) one by one
CALLS = frozenset({"jit", "pjit", "custom_jvp_call", "custom_vjp_call", "remat2", "checkpoint", "scan",
                   "closed_call", "core_call"})

# rules whose result varies continuously with each operand's value (a reading a few ulps
# off moves the result a few ulps), or moves entries
SMOOTH = frozenset({
    "add", "add_any", "sub", "mul", "neg", "max", "min", "abs", "clamp", "select_n", "exp", "exp2", "expm1",
    "tanh", "sin", "cos", "erf", "erfc", "logistic", "square", "broadcast_in_dim", "reshape", "transpose",
    "squeeze", "rev", "slice", "concatenate", "stack", "tile", "split", "pad", "dynamic_slice",
    "dynamic_update_slice", "gather", "copy", "sharding_constraint", "optimization_barrier", "reduce_sum",
    "reduce_max", "reduce_min", "reduce_window_sum", "reduce_window_max", "reduce_window_min", "cumsum",
    "dot_general", "conv_general_dilated", "scatter-add", "reduce_precision", "stop_gradient",
})

# rules with a pole or a domain edge: (operand, signs of it that keep away from it)
POLES = {
    "div": (1, ("pos",)), "log": (0, ("pos",)), "rsqrt": (0, ("pos",)), "pow": (0, ("pos",)),
    "sqrt": (0, ("pos", "nonneg")), "log1p": (0, ("pos", "nonneg")),
}

# real-valued results that are piecewise constant in their operands (discrete whatever they are)
PIECEWISE = frozenset({"sign"})


def _table(ctx) -> dict:
    """Tensor -> None (discrete, its own twin), a Tensor (its twin) or a pending twin."""
    table = ctx.__dict__.get("_twins")
    if table is None:
        table = ctx.__dict__["_twins"] = {}
    return table


def discrete(ctx, t: Tensor) -> bool:
    return t.kind in ("int", "bool") or t in _table(ctx)


def leaf(ctx, t: Tensor, arr, dtype=None) -> Tensor:
    """A constant of the jaxpr (``dtype``: its float type, None for integers and booleans):
    discrete, with a twin read exactly (in ``dtype``, as XLA holds it) where a reading is not."""
    table = _table(ctx)
    table[t] = None
    if dtype is None or t.kind != "real":
        return t
    arr = np.asarray(arr).astype(dtype)
    if not arr.size:
        return t
    flat = arr.reshape(-1)
    inexact = flat.size > 4096 or any(
        np.isfinite(float(v)) and S.number(v, dtype) is not S.exact_number(v) for v in set(flat.tolist()))
    if inexact:
        table[t] = _Pending(lambda: [array_const(arr, t.kind, exact=True)], "a constant")
    return t


class _Pending:
    """The twins of an equation's outputs, computed on first use."""
    __slots__ = ("make", "where", "outs")

    def __init__(self, make, where: str):
        self.make, self.where, self.outs = make, where, None

    def get(self, k: int) -> Tensor:
        if self.outs is None:
            try:
                outs = self.make()
            except KernelError as e:
                raise JaxprImportError(f"{self.where} (its constants read exactly): {e}", located=True) from None
            except JaxprImportError as e:
                if e.located:
                    raise
                raise JaxprImportError(f"{self.where} (its constants read exactly): {e}", located=True) from None
            self.outs = [outs] if isinstance(outs, Tensor) else list(outs)
        return self.outs[k]


def twin(ctx, t: Tensor) -> Tensor:
    """``t`` with its float constants read exactly (``t`` itself where none is inexact)."""
    table = _table(ctx)
    e = table.get(t)
    if e is None or isinstance(e, Tensor):
        return t if e is None else e
    pending, k = (e, 0) if isinstance(e, _Pending) else e
    out = pending.get(k)
    if out is not t:
        table.setdefault(out, None)         # a twin is exact: its own twin
    table[t] = None if out is t else out
    return out


def _role(eqn, ins) -> str:
    name = eqn.primitive.name
    if name == "convert_element_type":
        return "smooth" if np.dtype(eqn.outvars[0].aval.dtype).kind == "f" else "decide"
    if name == "integer_pow":
        return "smooth" if eqn.params.get("y", 0) >= 0 else "pole"
    if name in POLES:
        return "pole"
    return "smooth" if name in SMOOTH else "decide"


def apply(ctx, eqn, rule, ins, role: str | None = None):
    """``rule(ctx, eqn, *ins)``, reading twins where the rule decides (module docstring),
    and recording the outputs' discreteness and pending twins."""
    from .jaxpr_rules import facts
    name = eqn.primitive.name
    if role is None and name in CALLS:
        return rule(ctx, eqn, *ins)
    table = _table(ctx)
    disc = all(discrete(ctx, t) for t in ins)
    twinned = [k for k, t in enumerate(ins) if table.get(t) is not None]
    role = role or _role(eqn, ins)
    if not twinned or role == "decide":
        outs = rule(ctx, eqn, *([twin(ctx, t) for t in ins] if twinned else ins))
        if disc or name in PIECEWISE:
            for o in ([outs] if isinstance(outs, Tensor) else outs):
                table.setdefault(o, None)
        return outs
    main = list(ins)
    if role == "pole":
        k, safe = POLES.get(name, (0, ("pos",)))
        if k in twinned and ins[k].const is None and facts(ctx, ins[k]).sign not in safe:
            main[k] = twin(ctx, ins[k])
    outs = rule(ctx, eqn, *main)
    if disc:
        where = f"{name} at {where_of(eqn)}"

        def make():
            got = rule(ctx, eqn, *[twin(ctx, t) for t in ins])
            for o in ([got] if isinstance(got, Tensor) else got):
                if not o.where:
                    o.where = where
            return got
        pending = _Pending(make, where)
        for k, o in enumerate([outs] if isinstance(outs, Tensor) else outs):
            if not any(o is t for t in ins):
                table[o] = (pending, k)
    return outs
