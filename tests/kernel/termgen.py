"""Random kernel terms and random rewrites of them, for the soundness fuzz.

``random_pair(rng)`` returns ``(a, b, kind)``: ``b`` is ``a`` rewritten by a true
identity (kind "same") or perturbed (kind "perturbed", usually not equal).
"""
from __future__ import annotations

import random
from fractions import Fraction

from verigrad.kernel import (Deriv, Delta, Func, IndexVar, IntCond, IntVal, Num, RealCond, SizeSym, Sum, Var, subst)
from verigrad.kernel import terms as T

n, m = SizeSym("n"), SizeSym("m")
x, y = Var("x", (n,)), Var("y", (n,))
A = Var("A", (n, m))
s = Var("s", ())
p = Var("p", (), ("positive",))
q = Var("q", (n,), ("positive",))
k = IndexVar("k", n)          # the free index of every generated term
VARS = [x, y, A, s, p, q]


class Gen:
    def __init__(self, rng: random.Random):
        self.r = rng
        self.count = 0

    def new_index(self, size):
        self.count += 1
        return IndexVar(f"j{self.count}", size)

    def leaf(self, scope):
        r = self.r
        ns = [v for v in scope if v.size is n.__add__(0)] or [k]
        ms = [v for v in scope if v.size is m.__add__(0)]
        i = r.choice(ns)
        choices = [lambda: x[i], lambda: y[i], lambda: s, lambda: p, lambda: q[i],
                   lambda: Num(Fraction(r.randint(-3, 3), r.randint(1, 3))), lambda: IntVal(n),
                   lambda: IntVal(i)]
        if ms:
            a = r.choice(ms)
            choices.append(lambda: A[i, a])
        return r.choice(choices)()

    def pos(self, scope, depth, diff=True):
        """A term the kernel can see is positive."""
        r = self.r
        c = r.randrange(5)
        if c == 0:
            return p
        if c == 1:
            return q[r.choice([v for v in scope if v.size is k.size] or [k])]
        if c == 2:
            return Func("exp", (self.expr(scope, depth - 1),))
        if c == 3:
            return 1 + self.expr(scope, depth - 1) ** 2
        return IntVal(n)

    def expr(self, scope, depth, diff=True):
        """A random scalar term. ``diff=False`` keeps derivatives out (under an
        indicator, finite differences cannot tell the sign of an exact zero)."""
        r = self.r
        if depth <= 0 or r.random() < 0.25:
            return self.leaf(scope)
        c = r.randrange(14 if diff else 13)
        e = lambda: self.expr(scope, depth - 1, diff)  # noqa: E731
        if c in (0, 1):
            return e() + e()
        if c == 2:
            return e() - e()
        if c in (3, 4):
            return e() * e()
        if c == 5:
            return e() / self.pos(scope, depth - 1)
        if c == 6:
            return e() ** r.choice([2, 3])
        if c == 7:
            return self.pos(scope, depth - 1) ** r.choice([Fraction(1, 2), Fraction(-1, 2), -1])
        if c == 8:
            return Func(r.choice(["exp", "tanh"]), (e(),))
        if c == 9:
            return Func("log", (self.pos(scope, depth - 1),))
        if c == 10:
            size = r.choice([n, m])
            j = self.new_index(size)
            return Sum(j, self.expr(scope + [j], depth - 1, diff))
        if c == 11:
            ns = [v for v in scope if v.size is n.__add__(0)] + [k]
            a, b = r.choice(ns), r.choice(ns)
            return (Delta(a, b) if r.random() < 0.5 else IntCond(a, "<=", b)) * e()
        if c == 12:
            return RealCond(self.expr(scope, depth - 1, False), r.choice([">", ">="])) * e()
        ns = [v for v in scope if v.size is n.__add__(0)] + [k]
        return Deriv(e(), r.choice([x, y]), (r.choice(ns),))


# -- rewrites --------------------------------------------------------------------------------

def _subterms(t):
    out = [t]
    for a in t._args:
        if isinstance(a, T.Term):
            out += _subterms(a)
        elif isinstance(a, tuple):
            for b in a:
                if isinstance(b, T.Term):
                    out += _subterms(b)
    return out


def _replace(t, old, new):
    if t is old:
        return new
    if isinstance(t, (T.Var, T.Num, T.IntVal, T.Const, T.Delta, T.IntCond)):
        return t
    args = []
    for a in t._args:
        if isinstance(a, T.Term):
            args.append(_replace(a, old, new))
        elif isinstance(a, tuple) and any(isinstance(b, T.Term) for b in a):
            args.append(tuple(_replace(b, old, new) if isinstance(b, T.Term) else b for b in a))
        else:
            args.append(a)
    return type(t)(*args)


def same(t, rng: random.Random):
    """``t`` rewritten by one true identity at a random position."""
    subs = _subterms(t)
    rng.shuffle(subs)
    for u in subs:
        v = _rewrite_true(u, rng)
        if v is not None:
            try:
                return _replace(t, u, v)
            except Exception:
                continue
    return t + Num(0)


def _rewrite_true(u, rng):
    if isinstance(u, (T.Add, T.Mul)):
        args = list(u.terms)
        rng.shuffle(args)
        return type(u)(tuple(args))
    if isinstance(u, T.Mul) and len(u.terms) == 2 and isinstance(u.terms[1], T.Add):
        a = u.terms[0]
        return T.Add(tuple(a * b for b in u.terms[1].terms))
    if isinstance(u, T.Func) and u.fn == "exp" and isinstance(u.operands[0], T.Add):
        return T.Mul(tuple(Func("exp", (a,)) for a in u.operands[0].terms))
    if isinstance(u, T.Sum):
        body = u.body
        if isinstance(body, T.Add):
            return T.Add(tuple(T.Sum(u.idx, b) for b in body.terms))
        j2 = IndexVar(u.idx.name + "r", u.idx.size)
        return T.Sum(j2, subst(body, {u.idx: j2}))
    if isinstance(u, T.Pow) and u.exponent == 2:
        return u.base * u.base
    if isinstance(u, T.Index) and isinstance(u.base, T.Var) and u.base.shape[0] is n.__add__(0) and len(u.idx) >= 1:
        # f(i) = sum_j delta(j, i) f(j)
        j = IndexVar("jd", n)
        return Sum(j, Delta(j, u.idx[0]) * T.Index(u.base, (j,) + u.idx[1:]))
    return None


def perturbed(t, rng: random.Random):
    """``t`` with one small change: a constant, a variable, an index or an operator."""
    subs = _subterms(t)
    rng.shuffle(subs)
    for u in subs:
        v = None
        if isinstance(u, T.Num):
            v = Num(u.value + rng.choice([1, -1, Fraction(1, 2)]))
        elif isinstance(u, T.Index) and isinstance(u.base, T.Var) and u.base in (x, y):
            v = T.Index(y if u.base is x else x, u.idx)
        elif isinstance(u, T.Add):
            v = u.terms[0] - T.Add(u.terms[1:]) if len(u.terms) > 2 else u.terms[0] - u.terms[1]
        elif isinstance(u, T.Mul):
            v = T.Add(u.terms)
        elif isinstance(u, T.Func) and u.fn == "tanh":
            v = Func("exp", u.operands)
        elif isinstance(u, T.Pow):
            v = T.Pow(u.base, u.exponent + 1)
        if v is not None and v.shape == u.shape:
            try:
                return _replace(t, u, v)
            except Exception:
                continue
    return t + Num(1)


def random_pair(seed: int):
    rng = random.Random(seed)
    g = Gen(rng)
    t = g.expr([k], rng.randint(1, 4))
    if rng.random() < 0.5:
        return t, same(t, rng), "same"
    return t, perturbed(t, rng), "perturbed"
