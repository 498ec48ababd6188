"""Normal forms back to terms (trusted only to print faithfully; proves nothing).

Used to state side conditions and to show the residual of a failed decision.
"""
from __future__ import annotations

from fractions import Fraction

from . import normal as N
from . import terms as T


def reify(u: N.NF) -> T.Term:
    parts = [_mono(m, c) for m, c in u.terms]
    if not parts:
        return T.Num(0)
    return parts[0] if len(parts) == 1 else T.Add(tuple(parts))


def _mono(m: N.Mono, c: Fraction) -> T.Term:
    factors = [_pow(_atom(a), e) for a, e in m.factors]
    if c != 1 or not factors:
        factors.insert(0, T.Num(c))
    return factors[0] if len(factors) == 1 else T.Mul(tuple(factors))


def _pow(t: T.Term, e: Fraction) -> T.Term:
    return t if e == 1 else T.Pow(t, e)


def _atom(a) -> T.Term:
    if isinstance(a, N.EntryA):
        return T.Index(a.var, a.idx, total=True) if a.idx else a.var
    if isinstance(a, N.IntA):
        return T.IntVal(a.sym)
    if isinstance(a, N.ConstA):
        return T.Const(a.name)
    if isinstance(a, N.PrimeA):
        return T.Num(a.p)
    if isinstance(a, N.DeltaA):
        return T.Delta(a.p, 0)
    if isinstance(a, N.IndA):
        return T.IntCond(a.p, ">=", 0)
    if isinstance(a, N.RIndA):
        return T.RealCond(reify(a.u), a.rel)
    if isinstance(a, N.ExpA):
        return T.Func("exp", (_mono(a.m, Fraction(1)),))
    if isinstance(a, N.LogA):
        return T.Func("log", (reify(a.u),))
    if isinstance(a, N.FnA):
        return T.Func(a.fn, tuple(reify(u) for u in a.args))
    if isinstance(a, N.DFnA):
        return T.Func(T.ScalarFn(f"{a.fn.name}_d{a.k}", a.fn.arity), tuple(reify(u) for u in a.args))
    if isinstance(a, N.ParenA):
        return reify(a.u)
    if isinstance(a, N.SumA):
        body = _mono(a.m, Fraction(1))
        for b in reversed(a.binders):
            body = T.Sum(b, body)
        return body
    if isinstance(a, N.MaxA):
        return T.ReduceMax(a.b, reify(a.u), a.kind)
    if isinstance(a, N.ApplyA):
        return T.Index(T.Apply(a.fn, tuple(_tensor(x) for x in a.args)), a.idx, total=True)
    if isinstance(a, N.JacA):
        return T.Index(T.Jacobian(a.fn, a.argno, tuple(_tensor(x) for x in a.args)), a.idx, total=True)
    raise TypeError(f"cannot reify {a!r}")


def _tensor(x: N.TensorNF) -> T.Term:
    return T.Lamda(x.binders, reify(x.u))
