"""Random kernel term pairs for the soundness fuzz (``test_soundness_fuzz.py``).

``random_case(seed)`` returns a ``Case``: two terms ``a``, ``b`` of one shape, the
``family`` of shapes they come from and their ``kind``: "same" (``b`` is ``a`` rewritten
by a true identity: the kernel should usually prove it) or "perturbed" (``b`` is ``a``
changed a little, usually false: the kernel must not prove it unless it is true). The
families are the shapes an audit of the kernel used (issue 10):

- ``expr``      random expressions over vectors, sums, deltas, indicators, derivatives;
- ``window``    indicators and windows over a sum's index with constant and symbolic
                (index) bounds, pinned windows, deltas; off-by-one perturbations and the
                K1 shape (``Sum_b [b >= c] = n - c`` where ``n`` may be below ``c``);
- ``shift``     sums over ranges ``n - c`` (``n`` a size with lower bound >= ``c``);
- ``floormod``  floor division and remainder of indices (``i // c``, ``i % c``),
                reshapes ``t = c a + r`` of summed indices;
- ``at``        ``At(body, (p,), (v,))`` for a positive param ``p``, at values that are
                and are not provably positive (the K2 shape);
- ``integer``   integer-valued variables (fact ``integer``) compared with indices and
                with each other (strict versus weak comparisons);
- ``piecewise`` indicators inside exp and other functions, bounds on one real line,
                positive size denominators ``n - c``, the first argmax (issue 12);
- ``permutation`` gathers through argsorts and their inverses, scatter-adds, counts of
                preimages, ranges of entries; integer data with repeats as the impostor.

The size ``n`` of a case has a lower bound (``World(lower)``): index ranges ``n - c``
need ``lower >= c``. The fuzz also instantiates every proved pair at small sizes
(including 1) and checks the instances.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from verigrad.kernel import (At, Deriv, Delta, Func, Index, IndexVar, IntCond, IntVal, Num, Pow, RealCond, ReduceMax,
                             SizeSym, Sum, Var, subst)
from verigrad.kernel import terms as T

FAMILIES = ("expr", "window", "shift", "floormod", "at", "integer", "piecewise", "permutation")
HALF = Fraction(1, 2)


class World:
    """The symbols of a case: sizes ``n >= lower`` and ``m``, vectors over ``n``, a matrix
    over ``(n, m)``, scalars (one positive), a positive vector, integer data, and the free
    index ``k`` of ``n``."""

    def __init__(self, lower: int = 1):
        self.lower = lower
        self.n, self.m = n, m = SizeSym("n", lower), SizeSym("m")
        self.x, self.y = Var("x", (n,)), Var("y", (n,))
        self.A = Var("A", (n, m))
        self.s, self.p = Var("s", ()), Var("p", (), ("positive",))
        self.q = Var("q", (n,), ("positive",))
        self.length = Var("len", (), ("integer",))
        self.width = Var("w", (), ("integer",))
        self.lab = Var("lab", (n,), ("integer",))
        self.k = IndexVar("k", n)
        self.vars = [self.x, self.y, self.A, self.s, self.p, self.q]


WORLDS = {lo: World(lo) for lo in range(1, 5)}
_w = WORLDS[1]
n, m, x, y, A, s, p, q, k = _w.n, _w.m, _w.x, _w.y, _w.A, _w.s, _w.p, _w.q, _w.k
VARS = _w.vars


@dataclass
class Case:
    a: T.Term
    b: T.Term
    kind: str        # "same" or "perturbed"
    family: str
    world: World


class Gen:
    """Random scalar terms over a world's symbols; ``scope`` lists the index variables in
    scope (the free ``k`` and the binders of enclosing sums)."""

    def __init__(self, rng: random.Random, world: World = _w):
        self.r, self.w = rng, world
        self.count = 0

    def new_index(self, size):
        self.count += 1
        return IndexVar(f"j{self.count}", size)

    def _of(self, scope, size):
        return [v for v in scope if v.size is size]

    def leaf(self, scope):
        r, w = self.r, self.w
        i = r.choice(self._of(scope, w.n.__add__(0)) or [w.k])
        ms = self._of(scope, w.m.__add__(0))
        choices = [lambda: w.x[i], lambda: w.y[i], lambda: w.s, lambda: w.p, lambda: w.q[i],
                   lambda: Num(Fraction(r.randint(-3, 3), r.randint(1, 3))), lambda: IntVal(w.n),
                   lambda: IntVal(i)]
        if ms:
            a = r.choice(ms)
            choices.append(lambda: w.A[i, a])
        return r.choice(choices)()

    def pos(self, scope, depth):
        """A term the kernel can see is positive."""
        r, w = self.r, self.w
        c = r.randrange(5)
        if c == 0:
            return w.p
        if c == 1:
            return w.q[r.choice(self._of(scope, w.k.size) or [w.k])]
        if c == 2:
            return Func("exp", (self.expr(scope, depth - 1),))
        if c == 3:
            return 1 + self.expr(scope, depth - 1) ** 2
        return IntVal(w.n)

    def expr(self, scope, depth, diff=True):
        """A random scalar term. ``diff=False`` keeps derivatives out (under an
        indicator, finite differences cannot tell the sign of an exact zero)."""
        r, w = self.r, self.w
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
            return self.pos(scope, depth - 1) ** r.choice([HALF, -HALF, -1])
        if c == 8:
            return Func(r.choice(["exp", "tanh"]), (e(),))
        if c == 9:
            return Func("log", (self.pos(scope, depth - 1),))
        if c == 10:
            j = self.new_index(r.choice([w.n, w.m]))
            return Sum(j, self.expr(scope + [j], depth - 1, diff))
        ns = self._of(scope, w.n.__add__(0)) + [w.k]
        if c == 11:
            a, b = r.choice(ns), r.choice(ns)
            return (Delta(a, b) if r.random() < 0.5 else IntCond(a, "<=", b)) * e()
        if c == 12:
            return RealCond(self.expr(scope, depth - 1, False), r.choice([">", ">="])) * e()
        return Deriv(e(), r.choice([w.x, w.y]), (r.choice(ns),))

    def body(self, b: IndexVar, depth: int = 2) -> T.Term:
        """A random term that reads the index ``b`` (of range ``n``)."""
        r, w = self.r, self.w
        t = self.expr([b, w.k], depth, diff=False)
        if b not in t.free_idx:
            t = t * r.choice([w.x[b], w.q[b], IntVal(b), w.x[b] + w.y[b]])
        return t


# -- rewrites of an expression ----------------------------------------------------------------

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


def same(t, rng: random.Random, world: World = _w):
    """``t`` rewritten by one true identity at a random position."""
    subs = _subterms(t)
    rng.shuffle(subs)
    for u in subs:
        v = _rewrite_true(u, rng, world)
        if v is not None:
            try:
                return _replace(t, u, v)
            except Exception:
                continue
    return t + Num(0)


def _rewrite_true(u, rng, world):
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
    if isinstance(u, T.Index) and isinstance(u.base, T.Var) and u.base.shape[0] is world.n.__add__(0) \
            and len(u.idx) >= 1:
        # f(i) = sum_j delta(j, i) f(j)
        j = IndexVar("jd", world.n)
        return Sum(j, Delta(j, u.idx[0]) * T.Index(u.base, (j,) + u.idx[1:]))
    return None


def perturbed(t, rng: random.Random, world: World = _w):
    """``t`` with one small change: a constant, a variable, an index or an operator."""
    subs = _subterms(t)
    rng.shuffle(subs)
    for u in subs:
        v = None
        if isinstance(u, T.Num):
            v = Num(u.value + rng.choice([1, -1, Fraction(1, 2)]))
        elif isinstance(u, T.Index) and isinstance(u.base, T.Var) and u.base in (world.x, world.y):
            v = T.Index(world.y if u.base is world.x else world.x, u.idx)
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
    """The ``expr`` family: ``(a, b, kind)`` over the world with ``n >= 1``."""
    rng = random.Random(seed)
    g = Gen(rng)
    t = g.expr([k], rng.randint(1, 4))
    if rng.random() < 0.5:
        return t, same(t, rng), "same"
    return t, perturbed(t, rng), "perturbed"


# -- the audit's shapes -----------------------------------------------------------------------

def _at(f: T.Term, b: IndexVar, e) -> T.Term:
    """``f`` with the index ``b`` replaced by the integer expression ``e``."""
    return subst(f, {b: e})


def _ge(b, c, rng):
    """``[b >= c]`` in one of its spellings."""
    return rng.choice([lambda: IntCond(b, ">=", c), lambda: IntCond(c, "<=", b), lambda: IntCond(b, ">", c - 1),
                       lambda: IntCond(c - 1, "<", b)])()


def _lt(b, c, rng):
    """``[b < c]`` in one of its spellings."""
    return rng.choice([lambda: IntCond(b, "<", c), lambda: IntCond(c, ">", b), lambda: IntCond(b, "<=", c - 1),
                       lambda: IntCond(c - 1, ">=", b)])()


def window(rng: random.Random):
    """Indicators and windows over a summed index, constant and symbolic bounds."""
    c = rng.randint(1, 3)
    form = rng.randrange(8)
    lower = rng.randint(c, c + 1) if form in (0, 1, 2) else rng.randint(1, 4)
    w = WORLDS[lower]
    g = Gen(rng, w)
    b = IndexVar("b", w.n)
    f = g.body(b)
    kind = "same" if rng.random() < 0.5 else "perturbed"
    if form == 0:      # a window [c, n) re-indexed over n - c
        t = IndexVar("t", w.n - c)
        a = Sum(b, _ge(b, c, rng) * f)
        if kind == "same":
            return a, Sum(t, _at(f, b, t + c)), kind, w
        return (Sum(b, IntCond(b, ">", c) * f) if rng.random() < 0.5 else a), Sum(t, _at(f, b, t + c - 1)), kind, w
    if form == 1:      # a window [0, n - c)
        t = IndexVar("t", w.n - c)
        if kind == "same":
            return Sum(b, _lt(b, w.n - c, rng) * f), Sum(t, _at(f, b, t)), kind, w
        return Sum(b, IntCond(b, "<=", w.n - c) * f), Sum(t, _at(f, b, t)), kind, w
    if form == 2:      # the number of b >= c is n - c (n >= c)
        if kind == "same":
            return Sum(b, _ge(b, c, rng)), IntVal(w.n - c), kind, w
        return Sum(b, _ge(b, c, rng)), IntVal(w.n - c + rng.choice([1, -1])), kind, w
    if form == 3:      # K1: the count n - c where n may be below c (false at n < c)
        lo = rng.randint(1, c)
        w = WORLDS[lo]
        b = IndexVar("b", w.n)
        return Sum(b, _ge(b, c, rng)), IntVal(w.n - c), ("same" if lo >= c else "perturbed"), w
    if form == 4:      # a window pinned at the free index k
        k2 = w.k
        if kind == "same":
            return Sum(b, _ge(b, k2, rng) * IntCond(b, "<=", k2) * f), _at(f, b, k2), kind, w
        return Sum(b, _ge(b, k2, rng) * IntCond(b, "<=", k2 + 1) * f), _at(f, b, k2), kind, w
    if form == 5:      # a window pinned at a constant: [n > c] f(c)
        big = WORLDS[4]
        g, b = Gen(rng, big), IndexVar("b", big.n)
        f = g.body(b)
        c2 = rng.randint(0, 2)
        lhs = Sum(b, _ge(b, c2, rng) * IntCond(b, "<=", c2) * f)
        return lhs, _at(f, b, c2 if kind == "same" else c2 + 1), kind, big
    if form == 6:      # symbolic bounds: the same indicator spelled two ways, or a neighbour
        lhs = Sum(b, _lt(b, w.k + c - 1, rng) * f)
        if kind == "same":
            return lhs, Sum(b, _lt(b, w.k + c - 1, rng) * f), kind, w
        return lhs, Sum(b, IntCond(b, "<=", w.k + c - 1) * f), kind, w
    # a delta picks one term
    lhs = Sum(b, Delta(b, w.k) * f)
    return lhs, (_at(f, b, w.k) if kind == "same" else _at(f, b, w.k) + Sum(b, IntCond(b, "<", w.k) * f)), kind, w


def shift(rng: random.Random):
    """Sums over index ranges ``n - c``."""
    c = rng.randint(1, 3)
    w = WORLDS[rng.randint(c, 4)]
    g = Gen(rng, w)
    b, t, u = IndexVar("b", w.n), IndexVar("t", w.n - c), IndexVar("u", w.n - c)
    kind = "same" if rng.random() < 0.5 else "perturbed"
    form = rng.randrange(5)
    f = g.body(b)
    if form == 0:
        return Sum(t, Num(1)), IntVal(w.n - c + (0 if kind == "same" else rng.choice([1, -1]))), kind, w
    if form == 1:      # renaming the index of a shifted sum, and fubini with another sum
        j = IndexVar("j", w.m)
        inner = _at(f, b, t + c) * w.A[t, j]
        lhs = Sum(t, Sum(j, inner))
        if kind == "same":
            return lhs, Sum(j, Sum(u, subst(inner, {t: u}))), kind, w
        return lhs, Sum(j, Sum(u, subst(inner, {t: u}) * w.A[u + 1, j] / w.A[u, j])), kind, w
    if form == 2:      # the shifted sum as a windowed one
        lhs = Sum(t, _at(f, b, t + c))
        return lhs, Sum(b, (_ge(b, c, rng) if kind == "same" else IntCond(b, ">", c)) * f), kind, w
    if form == 3:      # a sum of indices over n - c
        lhs = Sum(t, IntVal(t) * _at(f, b, t))
        return lhs, Sum(b, _lt(b, w.n - c + (0 if kind == "same" else 1), rng) * IntVal(b) * f), kind, w
    # nested: sum_{t < n-c} sum_{v < c} x[t + v] (every window of width c)
    v = IndexVar("v", c)
    lhs = Sum(t, Sum(v, _at(f, b, t + v)))
    if kind == "same":      # swapped, or with the window read backwards (v -> c - 1 - v)
        return lhs, Sum(v, Sum(u, _at(f, b, u + (v if rng.random() < 0.5 else c - 1 - v)))), kind, w
    return lhs, Sum(v, Sum(u, _at(f, b, u))), kind, w


def floormod(rng: random.Random):
    """Floor division and remainder of indices, reshapes of summed indices."""
    c = rng.choice([2, 3, 4])
    w = WORLDS[rng.randint(1, 3)]
    g = Gen(rng, w)
    kind = "same" if rng.random() < 0.5 else "perturbed"
    form = rng.randrange(6)
    i = w.k
    factor = g.expr([i], 1, diff=False)
    if form == 0:      # (i // c) c + i % c = i, and neighbours
        pairs = [((i // c) * c + i % c, i), ((i + c) // c, i // c + 1), ((i + c) % c, i % c),
                 ((c * i + 1) // c, i), ((c * i + c - 1) % c, Poly_const(c - 1))]
        lhs, rhs = rng.choice(pairs)
        if kind == "perturbed":
            rhs = rng.choice([rhs + 1, rhs - 1, (i + 1) // c if rhs is i else i])
        return IntVal(lhs) * factor, IntVal(rhs) * factor, kind, w
    Y = Var("Y", (w.m, c))
    yv = Var("yv", (c * w.m,))
    t, a, r = IndexVar("t", c * w.m), IndexVar("a", w.m), IndexVar("r", c)
    h = _reading(rng, lambda: Y[t // c, t % c], lambda: IntVal(t % c), lambda: IntVal(t // c))
    if form == 1:      # sum over t < c m read as (t // c, t % c)
        rhs = subst(h, {t: c * a + r})
        lhs = Sum(t, h)
        if kind == "same":
            return lhs, Sum(a, Sum(r, rhs)), kind, w
        return lhs, Sum(a, Sum(r, subst(h, {t: c * a + (r + 1) % c}) if rng.random() < 0.5 else rhs * 2)), kind, w
    if form == 2:      # a strided read
        lhs = Sum(t, Delta(t % c, 0) * yv[t])
        return lhs, Sum(a, yv[c * a + (0 if kind == "same" else 1)]), kind, w
    if form == 3:      # counting remainders
        lo = rng.randint(1, c - 1)
        lhs = Sum(t, IntCond(t % c, ">=", lo))
        return lhs, IntVal((c - lo) * w.m + (0 if kind == "same" else 1)), kind, w
    if form == 4:      # [t % c == 0] spelled two ways
        j = IndexVar("j", c * w.m)
        lhs = Delta(j % c, 0) * factor
        rhs = (Delta(j, c * (j // c)) if kind == "same" else Delta(j, c * (j // c) + 1)) * factor
        return Sum(j, lhs * yv[j]), Sum(j, rhs * yv[j]), kind, w
    # a reshape read back: Lamda over t of Y[t // c, t % c] as a sum of deltas
    lam = T.Lamda([t], Y[t // c, t % c])
    body = Sum(a, Sum(r, Delta(c * a + r, t) * Y[a, r]))
    if kind == "perturbed":
        body = Sum(a, Sum(r, Delta(c * a + r, t) * Y[a, (r + 1) % c]))
    return lam, T.Lamda([t], body), kind, w


def Poly_const(v: int):
    from verigrad.kernel.sizes import Poly
    return Poly.const(v)


def _reading(rng, *leaves):
    """A random real term over the given leaf makers."""
    def go(d):
        if d <= 0 or rng.random() < 0.3:
            return rng.choice(leaves)()
        op = rng.randrange(4)
        if op == 0:
            return go(d - 1) + go(d - 1)
        if op == 1:
            return go(d - 1) * go(d - 1)
        if op == 2:
            return Func(rng.choice(["exp", "tanh"]), (go(d - 1),))
        return go(d - 1) * Num(Fraction(rng.randint(-3, 3), rng.randint(1, 2)))
    return go(2)


def at(rng: random.Random):
    """``At(body, (p,), (v,))`` for the positive param p: identities that need p > 0, at
    values that are provably positive ("same") or not ("perturbed": false at v < 0 unless
    the kernel records a condition)."""
    w = WORLDS[rng.randint(1, 2)]
    g = Gen(rng, w)
    p_, u = w.p, Var("u", ())
    positive = [lambda: Func("exp", (g.expr([w.k], 1),)), lambda: w.q[w.k], lambda: IntVal(w.n),
                lambda: 1 + w.q[w.k], lambda: Var("p2", (), ("positive",)), lambda: g.pos([w.k], 2)]
    anything = [lambda: w.s, lambda: w.x[w.k], lambda: g.expr([w.k], 2, diff=False), lambda: w.s - 1]
    kind = "same" if rng.random() < 0.5 else "perturbed"
    v = rng.choice(positive if kind == "same" else anything)()
    form = rng.randrange(7)
    if form == 0:
        return At(Pow(Pow(p_, 2), HALF), (p_,), (v,)), v, kind, w
    if form == 1:
        return At(Func("log", (p_ * p_,)), (p_,), (v,)), 2 * Func("log", (v,)), kind, w
    if form == 2:
        return At(Func("exp", (Func("log", (p_,)),)), (p_,), (v,)), v, kind, w
    if form == 3:
        return At(Pow(p_, HALF) * Pow(p_, HALF), (p_,), (v,)), v, kind, w
    if form == 4:      # a derivative taken at a point: only at a variable
        z = rng.choice([w.s, Var("p2", (), ("positive",))])
        return At(Deriv(Pow(u, 3) + Func("tanh", (u,)), u, ()), (u,), (z,)), \
            3 * z * z + 1 - Func("tanh", (z,)) ** 2 + (0 if kind == "same" else z), kind, w
    if form == 5:      # plain substitution of an arbitrary value in a random body
        body = g.expr([w.k], 2, diff=False) * p_ + Func("log", (p_,))
        return At(body, (p_,), (v,)), subst(body, {p_: v}) if kind == "same" else subst(body, {p_: v * v}), kind, w
    # the square root of a square of a positive value, inside a larger term
    ctx = g.expr([w.k], 1, diff=False)
    return ctx * At(Pow(Pow(p_, 2), HALF), (p_,), (v,)) + ctx, ctx * v + ctx, kind, w


def integer(rng: random.Random):
    """Integer data compared with indices and with each other."""
    w = WORLDS[rng.randint(1, 2)]
    g = Gen(rng, w)
    L, W_, K = w.length, w.width, IntVal(w.k)
    kind = "same" if rng.random() < 0.5 else "perturbed"
    lab = w.lab[w.k]
    terms = [L, W_, K, lab, IntVal(w.n)]
    u = sum((rng.choice([-2, -1, 1, 2]) * rng.choice(terms) for _ in range(rng.randint(1, 3))), Num(rng.randint(-2, 2)))
    if not u.atoms & {L, W_, w.lab}:
        u = u + L
    form = rng.randrange(5)
    factor = g.expr([w.k], 1, diff=False) if rng.random() < 0.5 else Num(1)
    if form == 0:      # strict and weak comparisons of integers
        lhs, rhs = RealCond(u, ">"), RealCond(u - 1, ">=")
        if kind == "perturbed":
            rhs = RealCond(u, ">=")
        return lhs * factor, rhs * factor, kind, w
    if form == 1:      # complements
        lhs = RealCond(u, "<") + RealCond(u, ">=")
        return lhs * factor, (Num(1) if kind == "same" else RealCond(u, ">")) * factor, kind, w
    if form == 2:      # a common factor of the comparison
        gg = rng.randint(2, 3)
        r = rng.randint(0, gg - 1)
        lhs = RealCond(gg * u + r, ">=")
        return lhs * factor, RealCond(u if kind == "same" else u - 1, ">=") * factor, kind, w
    if form == 3:      # a mask against a length over a sum
        b = IndexVar("b", w.n)
        f = g.body(b)
        lhs = Sum(b, RealCond(IntVal(b) - L, "<") * f)
        rhs = Sum(b, RealCond(IntVal(b) - L + (1 if kind == "same" else 0), "<=") * f)
        return lhs, rhs, kind, w
    # [u > 0] = 1 - [u <= 0]
    lhs = RealCond(u, ">")
    return lhs * factor, (1 - RealCond(u, "<=" if kind == "same" else "<")) * factor, kind, w


def _side(d, t, lower: bool, strict: bool, rng):
    """``[d > t]`` (``lower``; ``>=`` unless ``strict``) or ``[d < t]`` (``<=``), spelled with a
    random positive or negative factor of ``d - t``."""
    lam = Fraction(rng.choice([1, 2, 3]), rng.choice([1, 2])) * rng.choice([1, -1])
    rel = (">" if strict else ">=") if lower else ("<" if strict else "<=")
    if lam < 0:
        rel = {">": "<", ">=": "<=", "<": ">", "<=": ">="}[rel]
    return RealCond(lam * (d - t), rel)


def piecewise(rng: random.Random):
    """Indicators inside functions (``exp(c m [P] + v)``, a function of a piecewise
    argument), indicators of one real line (implied bounds, empty intervals), positive
    integer denominators (``n - c`` with ``n >= lower > c``) and the first argmax under a
    unique maximum (issue 12's rules; neighbours: a dropped term, a shifted bound, a wrong
    denominator, the next index)."""
    w = WORLDS[rng.randint(1, 3)]
    g = Gen(rng, w)
    kind = "same" if rng.random() < 0.5 else "perturbed"
    form = rng.randrange(6)
    u, v = g.expr([w.k], 1, diff=False), g.expr([w.k], 1, diff=False)
    ind = RealCond(g.expr([w.k], 1, diff=False), rng.choice([">", ">=", "<"]))
    exp = lambda t: Func("exp", (t,))  # noqa: E731
    if form == 0:      # exp(c u [P] + v) = exp(v) (1 - [P] + [P] exp(c u))
        cc = Num(Fraction(rng.choice([-3, -2, -1, 1, 2, 3]), rng.randint(1, 2)))
        lhs = exp(cc * u * ind + v)
        if kind == "same":
            return lhs, exp(v) * (1 - ind + ind * exp(cc * u)), kind, w
        return lhs, rng.choice([exp(v) * (1 + ind * exp(cc * u)), exp(v) * ind * exp(cc * u),
                                exp(v) * (1 - ind + ind * exp(cc * u + 1))]), kind, w
    if form == 1:      # f(v + [P] u) = (1 - [P]) f(v) + [P] f(v + u)
        f = rng.choice([lambda t: Func("tanh", (t,)), lambda t: RealCond(t, ">"), lambda t: Func("log", (1 + t * t,))])
        lhs = f(v + ind * u)
        if kind == "same":
            return lhs, (1 - ind) * f(v) + ind * f(v + u), kind, w
        return lhs, ind * f(v) + (1 - ind) * f(v + u), kind, w
    d = rng.choice([w.x[w.k], w.x[w.k] - w.y[w.k], u])
    t1, t2 = rng.randint(-2, 2), rng.randint(-2, 2)
    st1, st2 = rng.random() < 0.5, rng.random() < 0.5
    if form == 2:      # two bounds on one side: the tighter one
        lower = rng.random() < 0.5
        lhs = _side(d, t1, lower, st1, rng) * _side(d, t2, lower, st2, rng)
        tight = (t1, st1) if (t1 > t2 if lower else t1 < t2) or t1 == t2 and st1 else (t2, st2)
        if kind == "same":
            return lhs, _side(d, tight[0], lower, tight[1], rng), kind, w
        return lhs, _side(d, tight[0] + (1 if lower else -1), lower, tight[1], rng), kind, w
    if form == 3:      # a lower and an upper bound: empty when they cross
        lo, hi = max(t1, t2), min(t1, t2)
        if kind == "perturbed":
            lo, hi = hi - 1, lo
        return _side(d, lo, True, True, rng) * _side(d, hi, False, st2, rng), Num(0), kind, w
    if form == 4:      # (n - c)^-1 with n >= lower > c is a positive denominator
        w = WORLDS[rng.randint(2, 4)]
        cc = rng.randint(1, w.lower - 1)
        low = (1 - w.s) / IntVal(w.n - cc)
        den = w.n - cc if kind == "same" else w.n - cc + rng.choice([1, -1])
        return w.s + IntVal(den) * low, Num(1), kind, w
    # the first argmax of x (or of x + y) under a unique maximum
    b, j = IndexVar("b", w.n), IndexVar("j", w.n)
    val = rng.choice([lambda p: w.x[p], lambda p: w.x[p] + w.y[p]])
    mx = ReduceMax(j, val(j))
    top = lambda p: RealCond(val(p) - mx, ">=")  # noqa: E731
    first = lambda p: RealCond(Sum(j, IntCond(j, "<", p) * top(j)) - HALF, "<")  # noqa: E731
    am = Sum(b, IntVal(b) * top(b) * first(b))
    sub = rng.randrange(3)
    if sub == 0:
        return top(w.k) * first(w.k), (top(w.k) if kind == "same" else first(w.k)), kind, w
    if sub == 1:       # one_hot(argmax)[k]
        shift_ = 0 if kind == "same" else 1
        return RealCond(am - IntVal(w.k) - shift_, ">=") * RealCond(IntVal(w.k) + shift_ - am, ">="), top(w.k), kind, w
    # an indicator of a sum over the argmax
    lhs = RealCond(am - IntVal(w.k), ">=")
    return lhs, Sum(b, top(b) * IntCond(b, ">=", w.k + (0 if kind == "same" else 1))), kind, w


def permutation(rng: random.Random):
    """Gathers through argsorts (issue 12): a gather undone by the gather by the inverse
    permutation (``argsort(argsort(s))``), the transpose of a gather (a scatter-add), the
    count of preimages, the range of an entry; perturbed: the permutation for its inverse,
    integer data (repeats) for a permutation, an off-by-one range."""
    from verigrad.kernel import Argsort, IntEq, Lamda
    w = WORLDS[1]
    g = Gen(rng, w)
    kind = "same" if rng.random() < 0.5 else "perturbed"
    i, j, b = IndexVar("i", w.n), IndexVar("j", w.n), IndexVar("b", w.n)
    key = rng.choice([w.x, w.y, w.lab, Lamda([j], w.x[j] + w.y[j])])
    P = Argsort(key)
    Q = Argsort(P)
    inv = {"P": Q, "Q": P}
    name = rng.choice(["P", "Q"])
    perm = P if name == "P" else Q
    wrong = rng.choice([perm, w.lab]) if kind == "perturbed" else inv[name]
    f = g.body(b)                                   # a vector (in b) to route
    v = Lamda([b], f)

    def gather(vec, pm):
        return Lamda([i], Sum(j, IntEq(pm[i], j) * vec[j]))
    form = rng.randrange(6)
    if form == 4:       # floor division (top-k routing): an equality is a sum of d equalities, for integers
        from verigrad.kernel import IntDiv
        src, d = rng.choice([perm, w.lab]), rng.randint(1, 3)
        c = rng.randint(0, 1)
        lhs = IntEq(IntDiv(src[w.k], d), c)
        r = sum((IntEq(src[w.k], c * d + q) for q in range(d if kind == "same" else d - 1)), Num(0))
        return lhs, r, kind, w
    if form == 5:       # the range of a floor division of an entry
        from verigrad.kernel import IntDiv
        t = g.expr([w.k], 1, diff=False)
        return RealCond(IntDiv(perm[w.k], 2) - (0 if kind == "same" else 1), ">=") * t, t, kind, w
    if form == 0:       # route, then unroute
        return gather(gather(v, perm), wrong)[w.k], v[w.k], kind, w
    if form == 1:       # the transpose of a gather: a scatter-add, or the gather by the inverse
        scatter = Sum(i, v[i] * IntEq(perm[i], w.k))
        return scatter, gather(v, wrong)[w.k], kind, w
    if form == 2:       # one preimage of each index
        src = perm if kind == "same" else rng.choice([w.lab, Lamda([j], perm[j] + 1)])
        return Sum(i, IntEq(src[i], w.k)), Num(1), kind, w
    # the range of an entry
    t = g.expr([w.k], 1, diff=False)
    return RealCond(perm[w.k] - (0 if kind == "same" else 1), ">=") * t, t, kind, w


GENERATORS = {"window": window, "shift": shift, "floormod": floormod, "at": at, "integer": integer,
              "piecewise": piecewise, "permutation": permutation}


def random_case(seed: int) -> Case:
    """One case; the family is chosen by the seed (the audit's families twice as often
    as random expressions)."""
    rng = random.Random(seed)
    family = FAMILIES[(seed // 2) % len(FAMILIES)] if seed % 2 == 0 else rng.choice(FAMILIES[1:])
    if family == "expr":
        a, b, kind = random_pair(rng.getrandbits(32))
        return Case(a, b, kind, family, _w)
    for _ in range(20):
        try:
            a, b, kind, w = GENERATORS[family](rng)
        except Exception as e:     # a generated term the kernel's constructors refuse
            if type(e).__name__ != "KernelError":
                raise
            continue
        return Case(a, b, kind, family, w)
    raise RuntimeError(f"no {family} case from seed {seed}")
