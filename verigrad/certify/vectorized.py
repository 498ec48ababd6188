"""Vectorized numeric meaning of kernel terms (untrusted; an independent oracle).

Every index variable in scope is an axis of a numpy array: a term's value at a point of
the index space is an array broadcastable over those axes. ``Sum`` adds an axis and
reduces it, ``Lamda`` binds its indices to the index arrays it is read at, ``Index``
reads a tensor with integer index arrays (fancy indexing). The conventions are the
kernel's: ``0^-1 = 0``, ``log x = log|x|``, ``x^r = 0`` for ``x < 0`` and fractional r,
an entry off the shape reads 0.

With ``batch=B`` every variable's value carries a leading axis of B draws, and so does
every result: B draws cost one pass over the term (the batch is one more array axis,
read through ``_BATCH`` in the index environment).

Terms with derivatives or opaque functions are left to the entry-by-entry evaluator
(``evaluate.py``): ``supports`` says which terms this one takes.
"""
from __future__ import annotations

import math

import numpy as np

from verigrad.kernel import terms as T
from verigrad.kernel.permutation import Argsort, IntDiv, IntEq
from verigrad.kernel.sizes import FloorDiv, Poly
from .conventions import function, power

_UNSUPPORTED = (T.Deriv, T.Apply, T.Vjp, T.At)
_BATCH = object()   # the key of the batch axis's index array in an environment
WHOLE_CAP = 1 << 20  # entries (draws included) up to which a closed tensor is computed whole


def supports(t: T.Term) -> bool:
    """Whether ``t`` has no derivative, opaque function or At (checked once per term)."""
    hit = _support_cache.get(t)
    if hit is None:
        if isinstance(t, _UNSUPPORTED) or (isinstance(t, T.Func) and not isinstance(t.fn, str)):
            hit = False
        else:
            hit = all(supports(a) for a in _children(t))
        _support_cache[t] = hit
    return hit


_support_cache: dict = {}


def _children(t):
    for a in t._args:
        if isinstance(a, T.Term):
            yield a
        elif isinstance(a, tuple):
            yield from (b for b in a if isinstance(b, T.Term))


class Vectorized:
    """``slack``: a real comparison ``[x rel 0]`` is read as ``[x rel slack]`` for ``>``/``>=``
    and ``[x rel -slack]`` for ``<``/``<=``: with a small positive slack an indicator is 1
    only where it holds beyond rounding, with a negative one wherever it may hold."""

    def __init__(self, sizes: dict, values: dict, batch: int | None = None, slack: float = 0.0):
        self.sizes, self.values, self.batch, self.slack = sizes, values, batch, slack
        self.cache: dict = {}
        self.wholes: dict = {}   # closed terms computed whole: term -> array
        self._made: list = []    # keys of the cache entries read at index arrays, in order

    # integer expressions over index arrays ---------------------------------------------
    def ival(self, p: Poly, env: dict):
        total = 0
        for m, c in p.terms.items():
            v = c
            for s, k in m:
                if isinstance(s, FloorDiv):
                    val = self.ival(s.a, env) // self.ival(s.m, env)
                elif s in env:
                    val = env[s]
                else:
                    val = self.sizes[s]
                v = v * val ** k
            total = total + v
        return total

    def size(self, p: Poly) -> int:
        return int(self.ival(p, {}))

    # values ------------------------------------------------------------------------------------
    def tensor(self, t: T.Term) -> np.ndarray:
        """The whole tensor ``t`` (closed terms only)."""
        return self._whole(t).copy()

    def _whole(self, t: T.Term) -> np.ndarray:
        """The whole tensor ``t`` (closed), computed once per evaluator (read-only)."""
        hit = self.wholes.get(t)
        if hit is not None:
            return hit
        shape = tuple(self.size(s) for s in t.shape)
        env, ndim = {}, len(shape)
        lead = 0
        if self.batch is not None:     # axis 0 is the batch
            lead, B = 1, self.batch
            env[_BATCH] = np.arange(B).reshape((B,) + (1,) * ndim)
            shape = (B,) + shape
        idx = []
        for axis, n in enumerate(shape[lead:]):
            a = np.arange(n).reshape((1,) * (axis + lead) + (n,) + (1,) * (ndim - axis - 1))
            idx.append(a)
        out = self._at(t, tuple(idx), env, ndim + lead)
        out = self.wholes[t] = np.broadcast_to(np.asarray(out, dtype=np.float64), shape)
        return out

    def at(self, t: T.Term, idx: tuple, env: dict, ndim: int):
        """The entry ``t[idx]`` as an array broadcastable over ``ndim`` axes."""
        ids = tuple(map(id, idx))
        envs = tuple([id(env[v]) for v in t.free_idx if v in env])
        key = (t, ids, envs, ndim)
        hit = self.cache.get(key)
        if hit is not None:
            return hit[0]
        if idx and not envs and not t.free_idx and self._small(t):
            # A closed tensor read at index arrays is computed whole once and then read:
            # read through the index arrays of each context instead (a reshape inside a
            # sum, a transpose of a reshape, ...), a term of a few hundred nodes was
            # evaluated hundreds of thousands of times.
            out = self._read(self._whole(t), idx, env)
        else:
            out = self._at(t, idx, env, ndim)
        self.cache[key] = (out, idx, [env.get(v) for v in t.free_idx])   # keep the arrays alive
        if ids or envs:
            self._made.append(key)
        return out

    def _small(self, t: T.Term) -> bool:
        """Whether ``t`` is worth computing whole: not a variable (read directly), and few
        enough entries (a huge tensor read at a diagonal is not built)."""
        if isinstance(t, T.Var):
            return False
        entries = self.batch or 1
        for s in t.shape:
            entries *= self.size(s)
        return entries <= WHOLE_CAP

    def _read(self, x, idx, env):
        """Entries ``x[idx]`` of a whole tensor; an entry off the shape reads 0 (the
        kernel's total reading; numpy would fail, or wrap a negative index around)."""
        lead = (env[_BATCH],) if self.batch is not None else ()
        idx = tuple(np.asarray(i) for i in idx)
        if not idx:
            return x[lead] if lead else x
        axes = x.shape[len(lead):]
        if not any(i.size and (i.min() < 0 or i.max() >= n) for i, n in zip(idx, axes)):
            return x[lead + idx]
        if any(n == 0 for n in axes):
            return np.zeros(np.broadcast(*(lead + idx)).shape)
        ok = np.ones((), dtype=bool)
        for i, n in zip(idx, axes):
            ok = ok & (i >= 0) & (i < n)
        safe = tuple(np.clip(i, 0, n - 1) for i, n in zip(idx, axes))
        return np.where(ok, x[lead + safe], 0.0)

    def _forget(self, mark: int):
        """Drop the entries made since ``mark`` that were read at index arrays: inside a
        ``Sum`` those are the arrays it grew for its own axis, which no later call can be
        given again, so the entries are dead (and may be the largest arrays made). Closed
        entries (no index arrays) stay: another sum at the same depth reads them."""
        for key in self._made[mark:]:
            self.cache.pop(key, None)
        del self._made[mark:]

    def _at(self, t, idx, env, ndim):
        rule = _RULES.get((type(self), type(t)))
        if rule is None:
            rule = _rule_for(type(self), type(t))
        return rule(self, t, idx, env, ndim)

    # one method per kind of term (``_RULE_ORDER`` says which takes a class) ------------------
    def _var(self, t, idx, env, ndim):
        return self._read(np.asarray(self.values[t], dtype=np.float64), idx, env)

    def _num(self, t, idx, env, ndim):
        return float(t.value)

    def _const(self, t, idx, env, ndim):
        return math.pi

    def _intval(self, t, idx, env, ndim):
        return np.asarray(self.ival(t.poly, env), dtype=np.float64)

    def _named(self, t, idx, env, ndim):
        return self.at(t.body, idx, env, ndim)

    def _index(self, t, idx, env, ndim):
        e = tuple(self.ival(p, env) for p in t.idx)
        if not t.total:
            return self.at(t.base, e + idx, env, ndim)
        ok, clipped = True, []
        for ei, n in zip(e, t.base.shape):
            n = self.size(n)
            ok = ok & (ei >= 0) & (ei < n)
            clipped.append(np.clip(ei, 0, max(n - 1, 0)))
        val = self.at(t.base, tuple(clipped) + idx, env, ndim)
        return np.where(ok, val, 0.0)

    def _lamda(self, t, idx, env, ndim):
        k = len(t.idxs)
        env2 = {**env, **dict(zip(t.idxs, idx[:k]))}
        return self.at(t.body, idx[k:], env2, ndim)

    def _add(self, t, idx, env, ndim):
        at = self.at
        return sum(at(a, idx if a.shape else (), env, ndim) for a in t.terms)

    def _mul(self, t, idx, env, ndim):
        at = self.at
        return _product([at(a, idx if a.shape else (), env, ndim) for a in t.terms])

    def _pow(self, t, idx, env, ndim):
        return power(self.at(t.base, idx, env, ndim), t.exponent)

    def _func(self, t, idx, env, ndim):
        a = t.operands[0]
        return function(t.fn, self.at(a, idx if a.shape else (), env, ndim))

    def _sum(self, t, idx, env, ndim):
        n = self.size(t.idx.size)
        axis = np.arange(n).reshape((1,) * ndim + (n,))
        grow = tuple(_grown(i) for i in idx)
        env2 = {v: _grown(a) for v, a in env.items()}
        env2[t.idx] = axis
        mark = len(self._made)
        try:
            if isinstance(t, T.Sum) and isinstance(t.body, T.Mul) and n:
                # a sum of products: contracted without building the product (einsum)
                factors = [self.at(a, grow if a.shape else (), env2, ndim + 1) for a in t.body.terms]
                out = _contract(factors, ndim)
                if out is not None:
                    return out
                body = _product(factors)
            else:
                body = self.at(t.body, grow, env2, ndim + 1)
        finally:
            self._forget(mark)
        body = np.asarray(body, dtype=np.float64)
        body = np.broadcast_to(body, body.shape[:-1] + (n,))
        if isinstance(t, T.Sum):
            return body.sum(axis=-1) if n else np.zeros(body.shape[:-1])
        return body.max(axis=-1) if t.kind == "max" else body.min(axis=-1)

    def _delta(self, t, idx, env, ndim):
        return np.asarray(self.ival(t.a, env) == self.ival(t.b, env), dtype=np.float64)

    def _intcond(self, t, idx, env, ndim):
        a, b = self.ival(t.a, env), self.ival(t.b, env)
        r = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[t.rel]
        return np.asarray(r, dtype=np.float64)

    def _realcond(self, t, idx, env, ndim):
        x, e = np.asarray(self.at(t.t, idx, env, ndim)), self.slack
        return {"<": x < -e, "<=": x <= -e, ">": x > e, ">=": x >= e}[t.rel].astype(np.float64)

    def _inteq(self, t, idx, env, ndim):
        return np.asarray(np.asarray(self.at(t.t, (), env, ndim)) == self.ival(t.p, env), dtype=np.float64)

    def _intdiv(self, t, idx, env, ndim):
        return np.floor(np.asarray(self.at(t.t, (), env, ndim), dtype=np.float64) / self.ival(t.k, env))

    def _unknown(self, t, idx, env, ndim):
        raise TypeError(f"the vectorized evaluator does not take {type(t).__name__}")

    def _argsort(self, t, idx, env, ndim):
        """``argsort(s)[a]``: ``s`` read along one more axis (as a sum reads its body), sorted
        stably along it, then read at ``a`` (0 off the range, the kernel's total reading)."""
        n = self.size(t.shape[0])
        axis = np.arange(n).reshape((1,) * ndim + (n,))
        env2 = {v: _grown(a) for v, a in env.items()}
        vals = np.asarray(self.at(t.s, (axis,), env2, ndim + 1), dtype=np.float64)
        vals = np.broadcast_to(vals, np.broadcast_shapes(vals.shape, (1,) * ndim + (n,)))
        order = np.argsort(vals, axis=-1, kind="stable")
        a = np.asarray(idx[0])
        shape = np.broadcast_shapes(order.shape[:-1], a.shape)
        a = np.broadcast_to(a, shape)
        picked = np.take_along_axis(np.broadcast_to(order, shape + (n,)), np.clip(a, 0, n - 1)[..., None], -1)[..., 0]
        return np.where((a >= 0) & (a < n), picked, 0).astype(np.float64)


# The method that evaluates a term of each class: the first entry the class is a subclass
# of, in this order (as a chain of isinstance tests would take it); found once per class
# of evaluator and class of term (a subclass of the evaluator may override a method).
_RULE_ORDER = ((T.Var, "_var"), (T.Num, "_num"), (T.Const, "_const"), (T.IntVal, "_intval"), (T.Named, "_named"),
               (T.Index, "_index"), (T.Lamda, "_lamda"), (T.Add, "_add"), (T.Mul, "_mul"), (T.Pow, "_pow"),
               (T.Func, "_func"), ((T.Sum, T.ReduceMax), "_sum"), (T.Delta, "_delta"), (T.IntCond, "_intcond"),
               (T.RealCond, "_realcond"), (IntEq, "_inteq"), (Argsort, "_argsort"), (IntDiv, "_intdiv"))
_RULES: dict = {}


def _rule_for(evaluator, cls):
    name = next((r for kinds, r in _RULE_ORDER if issubclass(cls, kinds)), "_unknown")
    rule = _RULES[evaluator, cls] = getattr(evaluator, name)
    return rule


def _grown(a):
    """``a`` with one more axis of length 1 at the end (``np.expand_dims(a, -1)``, a view,
    without its argument checks: a sum grows every index array in scope this way)."""
    return np.asarray(a)[..., None]


def _product(factors):
    """The product of ``factors`` (arrays broadcastable together, or numbers). An exact
    zero factor makes the product 0 even where another factor overflowed float64 (exp of
    a huge finite argument): the terms are about exact reals. A product of finite
    factors is finite where none is zero, and a zero there already, so the zeros are
    looked for only where the product is not finite."""
    out = 1.0
    for f in factors:
        out = out * f
    if np.all(np.isfinite(out)):
        return out
    zero = False
    for f in factors:
        zero = zero | (np.asarray(f) == 0)
    return np.where(zero, 0.0, out) if np.any(zero) else out


CONTRACT_MIN = 2048     # entries of the product from which a contraction beats building it
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _contract(factors, ndim: int):
    """``sum over the last of ndim + 1 axes of the product of factors`` by ``np.einsum``,
    without building the product; None where that does not apply (a product too small
    to gain, the summed axis in no factor, more axes than letters) or where the result
    is not finite (an overflow or an exact zero against an infinity: the product's own
    rule decides those entries)."""
    arrays = [np.asarray(f, dtype=np.float64) for f in factors]
    if ndim + 1 > len(_LETTERS) or any(a.ndim > ndim + 1 for a in arrays):
        return None
    arrays = [a.reshape((1,) * (ndim + 1 - a.ndim) + a.shape) for a in arrays]
    try:
        full = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return None
    if full[-1] == 1 or math.prod(full) < CONTRACT_MIN:
        return None
    operands, subscripts = [], []
    for a in arrays:
        keep = [d for d in range(ndim + 1) if a.shape[d] != 1]
        operands.append(a.reshape(tuple(a.shape[d] for d in keep)))
        subscripts.append("".join(_LETTERS[d] for d in keep))
    out_axes = [d for d in range(ndim) if full[d] != 1]
    out = _einsum(subscripts, operands, "".join(_LETTERS[d] for d in out_axes))
    out = np.asarray(out, dtype=np.float64).reshape(tuple(full[d] for d in range(ndim)))
    return out if np.all(np.isfinite(out)) else None


def _einsum(subscripts, operands, out: str):
    """``np.einsum`` of ``subscripts -> out``; two operands as one batched matrix product
    (numpy's einsum contracts a matrix by a tensor some fifty times slower than matmul)."""
    if len(operands) != 2:
        return np.einsum(",".join(subscripts) + "->" + out, *operands, optimize=True)
    (sa, sb), (a, b) = subscripts, operands
    # a letter of one operand only, not kept: summed there first
    if drop := tuple(k for k, c in enumerate(sa) if c not in out and c not in sb):
        a, sa = a.sum(axis=drop), "".join(c for k, c in enumerate(sa) if k not in drop)
    if drop := tuple(k for k, c in enumerate(sb) if c not in out and c not in sa):
        b, sb = b.sum(axis=drop), "".join(c for k, c in enumerate(sb) if k not in drop)
    size = {c: n for s_, x in ((sa, a), (sb, b)) for c, n in zip(s_, x.shape)}
    batch = [c for c in out if c in sa and c in sb]
    con = [c for c in sa if c in sb and c not in out]
    ao, bo = [c for c in sa if c not in sb], [c for c in sb if c not in sa]
    n = lambda cs: math.prod(size[c] for c in cs)  # noqa: E731
    A = a.transpose([sa.index(c) for c in batch + ao + con]).reshape(n(batch), n(ao), n(con))
    B = b.transpose([sb.index(c) for c in batch + con + bo]).reshape(n(batch), n(con), n(bo))
    got = batch + ao + bo
    r = np.matmul(A, B).reshape(tuple(size[c] for c in got))
    return r.transpose([got.index(c) for c in out])
