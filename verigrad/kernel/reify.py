"""Normal forms back to terms (proves nothing; must only be faithful): to state side conditions
and to show the residual of a failed decision. The partial ``d f / d x_k`` of an opaque ``f``
is the symbol ``f'k``, whose name no user's function (an identifier) can have.
"""
from __future__ import annotations

from . import normal as N
from . import terms as T


def reify(u: N.NF) -> T.Term:
    parts = [_mono(m, c) for m, c in u.terms] or [T.Num(0)]
    return parts[0] if len(parts) == 1 else T.Add(tuple(parts))


def _mono(m: N.Mono, c=1) -> T.Term:
    factors = [_atom(a) if e == 1 else T.Pow(_atom(a), e) for a, e in m.factors]
    if c != 1 or not factors:
        factors.insert(0, T.Num(c))
    return factors[0] if len(factors) == 1 else T.Mul(tuple(factors))


def _sums(binders, body):
    for b in reversed(binders):
        body = T.Sum(b, body)
    return body


def _apply(a: N.ApplyA) -> T.Term:
    """``f(T)[I]``; a Jacobian entry ``J[I, K]`` as the VJP of the one-hot cotangent at ``I``."""
    if a.argno is None:
        return T.Index(T.Apply(a.fn, tuple(_tensor(x) for x in a.args)), a.idx, total=True)
    out = a.idx[:len(a.fn.out_shape)]
    # binders apart from out's indices (red team RT6-A3: an own o0 read Lamda[o0](delta(o0, o0)), all ones)
    taken = set().union(*(p.index_vars() for p in out))
    hot = [T.fresh_name(f"o{j}", s, taken) for j, s in enumerate(a.fn.out_shape)]
    deltas = [T.Delta(h, e) for h, e in zip(hot, out)]
    onehot = T.Lamda(hot, deltas[0] if len(deltas) == 1 else T.Mul(tuple(deltas)))
    return T.Index(T.Vjp(a.fn, a.argno, tuple(_tensor(x) for x in a.args), onehot), a.idx[len(out):], total=True)


def _tensor(x: N.TensorNF) -> T.Term:
    return T.Lamda(x.binders, reify(x.u))


_ATOMS = {
    N.EntryA: lambda a: T.Index(a.var, a.idx, total=True) if a.idx else a.var,
    N.IntA: lambda a: T.IntVal(a.sym),
    N.ConstA: lambda a: T.Const(a.name),
    N.PrimeA: lambda a: T.Num(a.p),
    N.DeltaA: lambda a: T.Delta(a.p, 0),
    N.IndA: lambda a: T.IntCond(a.p, ">=", 0),
    N.RIndA: lambda a: T.RealCond(reify(a.u), a.rel),
    N.ExpA: lambda a: T.Func("exp", (_mono(a.m),)),
    N.LogA: lambda a: T.Func("log", (reify(a.u),)),
    N.FnA: lambda a: T.Func(a.fn, tuple(reify(u) for u in a.args)),
    N.DFnA: lambda a: T.Func(T._intern(T.ScalarFn, (f"{a.fn.name}'{a.k}", a.fn.arity)), tuple(map(reify, a.args))),
    N.ParenA: lambda a: reify(a.u),
    N.SumA: lambda a: _sums(a.binders, _mono(a.m)),
    N.MaxA: lambda a: T.ReduceMax(a.b, reify(a.u), a.kind),
    N.ApplyA: _apply,
}


def _atom(a) -> T.Term:
    return _ATOMS[type(a)](a)
