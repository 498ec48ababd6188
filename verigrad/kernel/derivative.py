"""Partial derivatives of normal forms (trusted).

``derivative(nz, u, x, P)`` is ``d u / d x[P]`` for a normalized ``u``: the product
rule over each monomial, ``d x[I] / d x[P] = prod delta(I_a, P_a)``, the chain rule
through ``exp log tanh erf`` and opaque functions (their partials are new atoms), and
Leibniz's rule for finite sums (whose ranges never depend on ``x``). The deltas it
produces are eliminated by the normalizer's sums.

Every rule is valid where the term is differentiable. Where that needs a condition it
is recorded: a base raised to a negative or fractional power must be nonzero (or
positive), an indicator ``[t > 0]`` is differentiated as 0 off its kink ``t == 0`` where
``t`` is itself differentiable (for relu the convention ``relu'(0) = 0``), and ``max``
over an index where one index alone attains it. A second derivative of an opaque
function (or an atom with no rule) raises ``NotDifferentiable``.
"""
from __future__ import annotations

from fractions import Fraction

from .normal import (ONE, ZERO, ApplyA, ConstA, DFnA, EntryA, ExpA, FnA, LogA, MaxA, Mono, NF, Normalizer,
                     NotDifferentiable, ParenA, RIndA, SumA, nf_atom, nf_mono)
from .sizes import Poly, fresh_index, nonneg


def derivative(nz: Normalizer, u: NF, var, P) -> NF:
    """``d u / d var[P]`` in normal form."""
    if var not in u.tvars:
        return ZERO
    key = (u, var, P)
    hit = nz._der.get(key)
    if hit is None:
        hit = nz._der[key] = nz.add(*[nz.scale(_mono(nz, m, var, P), c) for m, c in u.terms if var in m.tvars])
    return hit


def _mono(nz: Normalizer, m: Mono, var, P) -> NF:
    parts = []
    for i, (a, e) in enumerate(m.factors):
        if var not in a.tvars:
            continue
        da = _atom(nz, a, var, P)
        if not da.terms:
            continue
        nz.use("deriv_product")
        rest = dict(m.factors[:i] + m.factors[i + 1:])
        if e != 1:
            nz.use("deriv_power")
            rest[a] = e - 1
            if not a.positive and not (e > 0 and e.denominator == 1):
                nz.need("nonzero" if e.denominator == 1 else "positive", a.u if isinstance(a, ParenA) else nf_atom(a))
        piece = nz.mul(nz.finish(rest), da) if rest else da
        parts.append(nz.scale(piece, e))
    return nz.add(*parts)


def _atom(nz: Normalizer, a, var, P) -> NF:
    if isinstance(a, EntryA):
        if a.var is not var:
            return ZERO
        nz.use("deriv_entry")
        return nz.prod(nz.delta(i - p) for i, p in zip(a.idx, P))
    if isinstance(a, ExpA):
        nz.use("deriv_exp")
        return nz.mul(nf_atom(a), derivative(nz, nf_mono(a.m), var, P))
    if isinstance(a, LogA):
        nz.use("deriv_log")
        if not a.u.positive:
            nz.need("nonzero", a.u)
        return nz.mul(nz.pow(a.u, -1), derivative(nz, a.u, var, P))
    if isinstance(a, FnA):
        return _fn(nz, a, var, P)
    if isinstance(a, ParenA):
        return derivative(nz, a.u, var, P)
    if isinstance(a, SumA):
        nz.use("deriv_sum")
        temps = [fresh_index(b.size) for b in a.binders]
        # the binders renamed to fresh temporaries (alpha-equivalence): a normal form stays one
        body = nf_mono(nz.rename_mono(a.m, {b: Poly.sym(t) for b, t in zip(a.binders, temps)}))
        return nz.sum(temps, derivative(nz, body, var, P))
    if isinstance(a, RIndA) and (top := nz.top(a)) is not None \
            and nonneg(top[1]) and nonneg(top[0].b.size - 1 - top[1]):
        # [u(p) - max_b u(b) >= 0], p in range; u differentiated for its conditions (continuity)
        nz.use("deriv_argmax")
        nz.need_unique(top[0])
        derivative(nz, a.u, var, P)
        return ZERO
    if isinstance(a, RIndA):
        # u differentiated for its conditions (continuity): an indicator inside u adds its
        # own kink, a power or log inside u its nonzero base
        nz.use("deriv_indicator_off_kink")
        nz.need("offkink", a.u)
        derivative(nz, a.u, var, P)
        return ZERO
    if isinstance(a, ApplyA) and a.argno is None:
        return _apply(nz, a, var, P)
    if isinstance(a, MaxA):
        return _extremum(nz, a, var, P)
    if isinstance(a, (DFnA, ApplyA)):
        raise NotDifferentiable(f"second derivative of the opaque function {a.fn.name}")
    if hasattr(a, "derive"):            # an atom of an extension module (permutation.py)
        return a.derive(nz, var, P)
    raise NotDifferentiable(f"no derivative rule for {a!r}")


def _fn(nz: Normalizer, a: FnA, var, P) -> NF:
    if a.fn == "tanh":
        nz.use("deriv_tanh")
        (u,) = a.args
        t = nf_atom(a)
        return nz.mul(nz.sub(ONE, nz.mul(t, t)), derivative(nz, u, var, P))
    if a.fn in ("sin", "cos"):
        nz.use("deriv_trig")          # sin' = cos, cos' = -sin
        (u,) = a.args
        d = nf_atom(FnA("cos", (u,))) if a.fn == "sin" else nz.scale(nf_atom(FnA("sin", (u,))), -1)
        return nz.mul(d, derivative(nz, u, var, P))
    if a.fn == "erf":
        nz.use("deriv_erf")
        (u,) = a.args
        # erf'(u) = 2 / sqrt(pi) * exp(-u^2)
        c = nz.mul(nz.scale(nz.pow(nf_atom(ConstA("pi")), Fraction(-1, 2), True), 2),
                   nz.exp(nz.scale(nz.mul(u, u), -1)))
        return nz.mul(c, derivative(nz, u, var, P))
    nz.use("deriv_opaque")
    parts = []
    for k, u in enumerate(a.args):
        du = derivative(nz, u, var, P)
        if du.terms:
            parts.append(nz.mul(nf_atom(DFnA(a.fn, k, a.args)), du))
    return nz.add(*parts)


def _extremum(nz: Normalizer, a: MaxA, var, P) -> NF:
    """``deriv_max``, its condition recorded (``need_unique``). The indicator is read
    exactly, not off a kink: it is 1 at the argmax."""
    nz.use("deriv_max")

    def top(b):
        ub = nz.subst_nf(a.u, {a.b: Poly.sym(b)})
        return ub, nz.rind(nz.sub(ub, nf_atom(a)), ">=" if a.kind == "max" else "<=", strict=False)
    nz.need_unique(a)
    t = fresh_index(a.b.size)
    ut, at_top = top(t)
    return nz.sum([t], nz.mul(at_top, derivative(nz, ut, var, P)))


Normalizer.derive = derivative       # the normal form's calculus


def _apply(nz: Normalizer, a: ApplyA, var, P) -> NF:
    """``d f(T)[I] / d x[P] = sum_k sum_K J_k(T)[I, K] * d T_k[K] / d x[P]``."""
    nz.use("deriv_opaque")
    parts = []
    for k, t in enumerate(a.args):
        if var not in t.tvars:
            continue
        temps = [fresh_index(b.size) for b in t.binders]
        tk = nz.subst_nf(t.u, {b: Poly.sym(x) for b, x in zip(t.binders, temps)})
        dt = derivative(nz, tk, var, P)
        jac = nf_atom(ApplyA(a.fn, k, a.args, a.idx + tuple(Poly.sym(x) for x in temps)))
        parts.append(nz.sum(temps, nz.mul(jac, dt)))
    return nz.add(*parts)
