"""Scalar algebra for the jaxpr importer (untrusted): kernel terms of one entry.

Light simplification only (constants folded, ``0 + x = x``, ``1 * x = x``, ``x * x = x^2``):
the kernel's normal form does the real work, these keep the terms it sees small.
A float literal is read as the number its author wrote: the float nearest to a closed
form such as ``sqrt(2/pi)``, ``1/sqrt(2)`` or ``2/sqrt(pi)`` (within two units in the last
place) as that closed form, any other as the simplest rational within four units in the
last place of its dtype (``1 - 0.9`` is 1/10, so ``c + (1 - c) = 1`` holds as the
programmer meant), or, where that needs a denominator over 10^7, as the shortest decimal
that rounds to it (``0.044715`` is ``44715/10^6``). Derivatives of ``erf`` bring ``2/sqrt(pi)`` exactly, so a
backward written with ``math.sqrt(2 / math.pi)`` can only be proved this way. Where a value
of the indices and sizes alone decides (a comparison, a pole), its constants are read as
the rationals they are instead (``ExactFloat``, ``jaxpr_exact``: red team RT-36).

Non-smooth operations become indicators, exact everywhere:

    max(a, b) = a [a - b > 0] + b [a - b <= 0],     |x| = x [x > 0] - x [x < 0],

and a comparison of two integer expressions (iotas, sizes) is a kernel ``IntCond`` or
``Delta``, decided on the spot when the arithmetic oracle can. A comparison of other
integer-valued terms (integer data) is written ``[u >= 0]`` with ``u`` integer-valued, the
form the kernel decides as an integer comparison; a comparison of booleans is logic
(``[a == b] = ab + (1-a)(1-b)``), never an indicator of a real difference, whose "kink"
``a - b = 0`` would hold on a set of positive measure.

Bitwise operations on integer expressions are arithmetic: ``x & (2^k - 1)`` is the floor
remainder ``x mod 2^k`` (two's complement), a shift right by ``k`` is ``x // 2^k``.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verigrad.kernel import Add, Delta, Func, IntCond, IntEq, IntVal, Mul, Num, Pow, RealCond, Term
from verigrad.kernel.sizes import ZERO, Poly, as_poly, nonneg

from .jaxpr_errors import JaxprImportError


class NonFiniteConstant(JaxprImportError, ValueError):
    """A non-finite number where the kernel needs a term (the kernel's reals are finite)."""


# -- exact constants --------------------------------------------------------------------
#
# A constant is ``q * prod p^e * pi^c``: q rational, p primes with 0 < e < 1, c rational.
# Products, quotients and powers of constants are folded into this form on import, so
# ``x / sqrt(2)`` and ``x * 0.7071067811865476`` arrive as the same term.

def _factor(n: int) -> dict:
    out, p = {}, 2
    while p * p <= n and p < 10 ** 5:
        while n % p == 0:
            out[p] = out.get(p, 0) + 1
            n //= p
        p += 1
    if n > 1:
        out[n] = out.get(n, 0) + 1
    return out


def const_form(t: Term):
    """``(q, {p or 'pi': e})`` for a constant term, or None."""
    from verigrad.kernel import Const
    if isinstance(t, Num):
        return t.value, {}
    if isinstance(t, Const):
        return Fraction(1), {"pi": Fraction(1)}
    if isinstance(t, Pow):
        c = const_form(t.base)
        return None if c is None else _cpow(c, t.exponent)
    if isinstance(t, Mul):
        out = (Fraction(1), {})
        for x in t.terms:
            c = const_form(x)
            if c is None:
                return None
            out = _cmul(out, c)
        return out
    return None


def _cmul(a, b):
    pw = dict(a[1])
    for k, e in b[1].items():
        pw[k] = pw.get(k, 0) + e
    return a[0] * b[0], pw


def _cpow(c, e: Fraction):
    q, pw = c
    e = Fraction(e)
    out = {k: x * e for k, x in pw.items()}
    if e.denominator == 1:
        if q == 0 and e < 0:
            return None
        return q ** int(e), out
    if q <= 0:
        return None
    for n, sign in ((q.numerator, 1), (q.denominator, -1)):
        for p, k in _factor(n).items():
            out[p] = out.get(p, 0) + sign * k * e
    return Fraction(1), out


def const_term(c) -> Term:
    """The term of a constant form, whole powers of primes moved into the rational."""
    from verigrad.kernel import Const
    q, pw = c
    q = Fraction(q)
    factors = []
    for k in sorted(pw, key=str):
        e = Fraction(pw[k])
        if k != "pi":
            whole = e.numerator // e.denominator
            q *= Fraction(k) ** whole
            e -= whole
        if e:
            factors.append(Pow(Const("pi") if k == "pi" else Num(k), e) if (k != "pi" or e != 1) else Const("pi"))
    if q == 0:
        return Num(0)
    if not factors:
        return Num(q)
    return Mul((Num(q),) + tuple(factors)) if q != 1 else (factors[0] if len(factors) == 1 else Mul(tuple(factors)))


def _closed_forms() -> list:
    """(value, term) for ``q 2^a 3^b pi^c``: q a small rational, a, b in {-1/2, 0, 1/2},
    c in {-1, -1/2, 0, 1/2, 1, 2}, irrational ones only (rationals are read as decimals)."""
    import itertools
    import math
    halves = (Fraction(-1, 2), Fraction(0), Fraction(1, 2))
    out = {}
    for q, a, b, c in itertools.product((1, 2, 3, 4, Fraction(1, 2), Fraction(1, 3), Fraction(1, 4)), halves, halves,
                                        (Fraction(-1), Fraction(-1, 2), Fraction(0), Fraction(1, 2), Fraction(1),
                                         Fraction(2))):
        if a == b == c == 0:
            continue
        value = float(q) * 2 ** float(a) * 3 ** float(b) * math.pi ** float(c)
        term = const_term((Fraction(q), {2: a, 3: b, "pi": c}))
        key = (len(str(term)), str(term))
        if value not in out or key < out[value][0]:
            out[value] = (key, term)
    return sorted((v, t) for v, (_, t) in out.items())


_CLOSED: list = []   # (value, term), sorted by value; built on first use
_VALUES: list = []


def _closed_form(v: float, rel: float = 4.5e-16):
    import bisect
    if not _CLOSED:
        _CLOSED.extend(_closed_forms())
        _VALUES.extend(x for x, _ in _CLOSED)
    a = abs(v)
    k = bisect.bisect_left(_VALUES, a * (1 - rel - 5e-17))
    if k < len(_VALUES) and abs(_VALUES[k] - a) <= rel * a:
        t = _CLOSED[k][1]
        return t if v > 0 else neg(t)
    return None


ULPS = 4                 # how far (in units in the last place) a constant may be from its reading
MAX_DENOMINATOR = 10 ** 7
NARROW_MAX_DENOMINATOR = 1000


def simplest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The rational of least denominator in ``[lo, hi]`` (``0 < lo <= hi``), by continued
    fractions (the Stern-Brocot tree)."""
    fl = lo.numerator // lo.denominator
    if fl == lo:
        return Fraction(fl)
    if fl + 1 <= hi:
        return Fraction(fl + 1)
    return fl + 1 / simplest_between(1 / (hi - fl), 1 / (lo - fl))


def reading(v: float, dtype=None) -> Fraction:
    """The number a float constant stands for: the simplest rational within ``ULPS`` units
    in the last place of its dtype (``1 - 0.9`` is 1/10, ``1/3`` is 1/3, so the
    programmer's identities such as ``c + (1 - c) = 1`` hold), unless that needs a
    denominator beyond ``MAX_DENOMINATOR``; then the shortest decimal that rounds to it
    (``0.044715`` is ``44715/10^6``). Never a whole or half number the float is not."""
    wide = dtype is None or np.dtype(dtype).itemsize >= 8
    dec = Fraction(repr(v)) if wide else \
        Fraction(np.format_float_scientific(np.asarray(v, dtype=dtype)[()], unique=True))
    if v == int(v):
        return Fraction(int(v)) if abs(v) < 2 ** 53 else dec
    try:
        eps = float(np.finfo(dtype if dtype is not None else np.float64).eps)
    except (TypeError, ValueError):
        eps = float(np.finfo(np.float64).eps)
    # in float32 (or narrower) four ulps are wide: only a small denominator is meant
    limit = MAX_DENOMINATOR if wide else NARROW_MAX_DENOMINATOR
    a = abs(v)
    ulp = eps * 2.0 ** np.floor(np.log2(a))
    lo, hi = Fraction(a) - Fraction(ULPS * ulp), Fraction(a) + Fraction(ULPS * ulp)
    if lo <= 0:
        return dec
    q = simplest_between(lo, hi)
    if q.denominator > limit or q.denominator >= dec.denominator:
        return dec
    if q.denominator <= 2:
        # A float that is not a whole or half number is never read as one (red team
        # RT-11: float32 99.99998 read as 100 moved ``[i > C]`` for an index i to
        # ``[i >= 101]``). With no such number in the window, the reading and the float lie
        # on the same side of every integer and half-integer, so comparisons with
        # integers, floor, ceil, round and integer casts see the value XLA computes.
        return dec
    return q if v > 0 else -q


class ExactFloat(float):
    """A float constant read as the number it is, never as a nearby simpler one: the twin
    of a constant inside a value of the indices, sizes and integer or boolean data alone,
    where that value decides something (``jaxpr_exact``). ``number`` reads it exactly, so
    a rule that reads ``Tensor.const`` again (an exponent, a fill value) reads it exactly too."""
    __slots__ = ()


def exact_number(v) -> Term:
    """The rational a finite float denotes, exactly (``float32(0.001)`` is
    ``0.001000000047497451305389404296875``)."""
    v = float(v)
    if not np.isfinite(v):
        raise NonFiniteConstant(f"the non-finite constant {v} reaches a value the kernel must represent")
    return Num(Fraction(v))


def number(v, dtype=None, exact: bool = False) -> Term:
    """A Python / NumPy number as an exact constant (see the module docstring). ``dtype``:
    the float type it was written in (its units in the last place; default float64, or
    the NumPy scalar's own). ``exact`` (or an ``ExactFloat``): the rational the float is."""
    if isinstance(v, (bool, np.bool_)):
        return Num(int(v))
    if isinstance(v, (int, np.integer)):
        return Num(int(v))
    if exact or isinstance(v, ExactFloat):
        return exact_number(v)
    if dtype is None and isinstance(v, np.floating):
        dtype = v.dtype
    v = float(v)
    if not np.isfinite(v):
        raise NonFiniteConstant(f"the non-finite constant {v} reaches a value the kernel must represent")
    if v != int(v):
        narrow = dtype is not None and np.dtype(dtype).itemsize < 8
        t = _closed_form(v, 4 * float(np.finfo(dtype).eps) if narrow else 4.5e-16)
        if t is not None:
            return t
    return Num(reading(v, dtype))


def num_value(t):
    """The rational value of a ``Num``, else None."""
    return t.value if isinstance(t, Num) else None


def add(a: Term, b: Term) -> Term:
    va, vb = num_value(a), num_value(b)
    if va is not None and vb is not None:
        return Num(va + vb)
    if va == 0:
        return b
    if vb == 0:
        return a
    terms = (a.terms if isinstance(a, Add) else (a,)) + (b.terms if isinstance(b, Add) else (b,))
    return Add(terms)


def neg(a: Term) -> Term:
    va = num_value(a)
    if va is not None:
        return Num(-va)
    c = const_form(a)
    if c is not None:
        return const_term((-c[0], c[1]))
    return Mul((Num(-1), a))


def sub(a: Term, b: Term) -> Term:
    return add(a, neg(b))


def mul(a: Term, b: Term) -> Term:
    va, vb = num_value(a), num_value(b)
    if va is not None and vb is not None:
        return Num(va * vb)
    if va == 0 or vb == 0:
        return Num(0)
    if va == 1:
        return b
    if vb == 1:
        return a
    ca, cb = const_form(a), const_form(b)
    if ca is not None and cb is not None:
        return const_term(_cmul(ca, cb))
    if a is b:
        return Pow(a, 2)  # keeps squares visibly non-negative (variances stay positive)
    return Mul((a, b))


def power(a: Term, e) -> Term:
    e = Fraction(e)
    if e == 1:
        return a
    if e == 0:
        return Num(1)
    c = const_form(a)
    if c is not None:
        c = _cpow(c, e)
        if c is not None:
            return const_term(c)
    if isinstance(a, Pow) and e.denominator == 1:
        # (b^r)^k = b^(rk) for an integer k, unless r is fractional and rk whole
        # (under the convention b^r = 0 for b < 0, (b^(1/2))^2 is not b).
        r = a.exponent
        if r.denominator == 1 or (r * e).denominator != 1:
            return power(a.base, r * e)
    return Pow(a, e)


def div(a: Term, b: Term) -> Term:
    vb = num_value(b)
    if vb is not None and vb != 0:
        return mul(a, Num(1 / vb))
    return mul(a, power(b, -1))


def fn(name: str, a: Term) -> Term:
    return Func(name, (a,))


def exponent_of(t: Term) -> Fraction | None:
    """A constant exponent as a rational (a float is read as its shortest decimal)."""
    v = num_value(t)
    return Fraction(v) if v is not None else None


# -- integer expressions ---------------------------------------------------------------

def int_poly(t: Term) -> Poly | None:
    """The integer expression a term denotes (iotas, sizes, integer constants), or None."""
    if isinstance(t, IntVal):
        return t.poly
    if isinstance(t, Num):
        return Poly.const(int(t.value)) if t.value.denominator == 1 else None
    if isinstance(t, (Add, Mul)):
        parts = [int_poly(x) for x in t.terms]
        if any(p is None for p in parts):
            return None
        out = parts[0]
        for p in parts[1:]:
            out = out + p if isinstance(t, Add) else out * p
        return out
    return None


def scaled_int_poly(t: Term) -> Poly | None:
    """``L * t`` as an integer expression, for the least positive integer ``L`` that clears
    the denominators of a polynomial ``t`` in integer expressions with rational
    coefficients (``i * 4294967/2^32 - 1`` gives ``4294967 i - 2^32``), or None. ``[t rel 0]``
    is ``[L t rel 0]`` exactly, and the kernel decides the latter as an integer comparison
    (``[4294967 i - 2^32 >= 0]`` is ``[i >= 1001]``), where a real indicator of an index
    would need a kink condition it cannot meet."""
    from math import lcm

    def walk(x):            # (integer Poly, denominator)
        if isinstance(x, IntVal):
            return x.poly, 1
        if isinstance(x, Num):
            return Poly.const(x.value.numerator), x.value.denominator
        if isinstance(x, (Add, Mul)):
            parts = [walk(y) for y in x.terms]
            if any(q is None for q in parts):
                return None
            p, d = parts[0]
            for q, e in parts[1:]:
                if isinstance(x, Add):
                    m = lcm(d, e)
                    p, d = p * (m // d) + q * (m // e), m
                else:
                    p, d = p * q, d * e
            return p, d
        return None
    got = walk(t)
    if got is None:
        return None
    p, d = got
    from math import gcd
    g = 0
    for c in p.terms.values():
        g = gcd(g, c)
    g = gcd(g, d) if g else d
    return p if g <= 1 else Poly({m: c // g for m, c in p.terms.items()})


def int_value(p: Poly) -> Term:
    p = as_poly(p)
    return Num(p.const_value()) if p.is_const() else IntVal(p)


# -- comparisons and logic ----------------------------------------------------------------

RELATIONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def int_compare(pa: Poly, pb: Poly, rel: str) -> Term:
    """``[pa rel pb]`` for integer expressions, decided when provable."""
    d = pa - pb
    if rel in ("==", "!="):
        if d.is_const():
            hit = d.const_value() == 0
        elif nonneg(d - 1) or nonneg(-d - 1):
            hit = False
        else:
            t = Delta(pa, pb)
            return t if rel == "==" else sub(Num(1), t)
        return Num(int(hit if rel == "==" else not hit))
    # [d rel 0] as [p >= 0]
    p = {"<": -d - 1, "<=": -d, ">": d - 1, ">=": d}[rel]
    if nonneg(p):
        return Num(1)
    if nonneg(-p - 1):
        return Num(0)
    return IntCond(pa, rel, pb)


def real_compare(a: Term, b: Term, rel: str) -> Term:
    """``[a rel b]`` for real terms: an indicator of ``a - b``."""
    t = sub(a, b)
    v = num_value(t)
    if v is not None:
        ok = {"<": v < 0, "<=": v <= 0, ">": v > 0, ">=": v >= 0, "==": v == 0, "!=": v != 0}[rel]
        return Num(int(ok))
    if rel == "==":
        return mul(RealCond(t, ">="), RealCond(t, "<="))
    if rel == "!=":
        return sub(Num(1), mul(RealCond(t, ">="), RealCond(t, "<=")))
    return RealCond(t, rel)


def compare(a: Term, b: Term, rel: str) -> Term:
    pa, pb = int_poly(a), int_poly(b)
    if pa is not None and pb is not None:
        return int_compare(pa, pb, rel)
    if (p := scaled_int_poly(sub(a, b))) is not None:
        return int_compare(p, ZERO, rel)     # i * q rel c with rationals q, c: an integer comparison
    return real_compare(a, b, rel)


def integer_compare(a: Term, b: Term, rel: str) -> Term:
    """``[a rel b]`` for integer-valued terms (integer data, sizes, indices): decided for
    integer expressions, else ``[u >= 0]`` with ``u`` integer-valued (``a < b`` is
    ``b - a - 1 >= 0``), which the kernel decides as an integer comparison."""
    pa, pb = int_poly(a), int_poly(b)
    if pa is not None and pb is not None:
        return int_compare(pa, pb, rel)
    d = sub(a, b)
    v = num_value(d)
    if v is not None:
        return Num(int({"<": v < 0, "<=": v <= 0, ">": v > 0, ">=": v >= 0, "==": v == 0, "!=": v != 0}[rel]))
    if rel in ("==", "!="):
        # the kernel's integer equality: [d >= 0][-d >= 0], or an equality atom of a permutation
        eq = IntEq(d, 0)
        return eq if rel == "==" else sub(Num(1), eq)
    u = {"<": sub(neg(d), Num(1)), "<=": neg(d), ">": sub(d, Num(1)), ">=": d}[rel]
    return RealCond(u, ">=")


def bool_compare(a: Term, b: Term, rel: str) -> Term:
    """``[a rel b]`` for 0/1-valued terms, by logic (False < True, as XLA orders booleans)."""
    if rel == "==":
        return add(mul(a, b), mul(logical_not(a), logical_not(b)))
    if rel == "!=":
        return logical_xor(a, b)
    if rel == "<":
        return mul(logical_not(a), b)
    if rel == ">":
        return mul(a, logical_not(b))
    if rel == "<=":
        return logical_or(logical_not(a), b)
    return logical_or(a, logical_not(b))


def logical_and(a, b):
    return mul(a, b)


def logical_or(a, b):
    return sub(add(a, b), mul(a, b))


def logical_not(a):
    return sub(Num(1), a)


def logical_xor(a, b):
    return sub(add(a, b), mul(Num(2), mul(a, b)))


def select(pred: Term, on_false: Term, on_true: Term) -> Term:
    """``pred ? on_true : on_false`` for a 0/1-valued ``pred``."""
    v = num_value(pred)
    if v is not None:
        return on_true if v else on_false
    if on_false is on_true:
        return on_true
    return add(mul(pred, on_true), mul(logical_not(pred), on_false))


# -- non-smooth functions as indicators ----------------------------------------------------

def maximum(a: Term, b: Term) -> Term:
    t = sub(a, b)
    return add(mul(a, RealCond(t, ">")), mul(b, RealCond(t, "<="))) if num_value(t) is None \
        else (a if num_value(t) > 0 else b)


def minimum(a: Term, b: Term) -> Term:
    t = sub(a, b)
    return add(mul(a, RealCond(t, "<")), mul(b, RealCond(t, ">="))) if num_value(t) is None \
        else (a if num_value(t) < 0 else b)


def sign(a: Term) -> Term:
    v = num_value(a)
    if v is not None:
        return Num((v > 0) - (v < 0))
    if (p := scaled_int_poly(a)) is not None:
        return sub(int_compare(p, ZERO, ">"), int_compare(p, ZERO, "<"))
    return sub(RealCond(a, ">"), RealCond(a, "<"))


def absolute(a: Term) -> Term:
    v = num_value(a)
    if v is not None:
        return Num(abs(v))
    return mul(a, sign(a))


def int_maximum(a: Term, b: Term, pick: str = "max") -> Term:
    """``max(a, b)`` (or ``min``) of integer-valued terms, by integer comparisons."""
    first = integer_compare(a, b, ">" if pick == "max" else "<")
    v = num_value(first)
    if v is not None:
        return a if v else b
    return add(mul(a, first), mul(b, logical_not(first)))


def int_sign(a: Term) -> Term:
    """``sign(a)`` of an integer-valued term."""
    return sub(integer_compare(a, Num(0), ">"), integer_compare(a, Num(0), "<"))


# -- bitwise operations on integer expressions (two's complement, unbounded) ---------------

def low_bits(p: Poly, k: int) -> Poly:
    """``p mod 2^k`` (floor remainder, in ``[0, 2^k)``): the low k bits of ``p``."""
    return ZERO if k == 0 else p % Poly.const(2 ** k)


def and_const(p: Poly, c: int) -> Poly:
    """``p & c`` for an integer constant ``c``, exact for every integer ``p`` in two's
    complement: each run of set bits ``[lo, hi)`` of ``c >= 0`` contributes
    ``(p mod 2^hi) - (p mod 2^lo)``; for ``c < 0``, ``p & c = p - (p & ~c)``."""
    if c < 0:
        return p - and_const(p, ~c)
    out, b = ZERO, 0
    while c >> b:
        if (c >> b) & 1:
            e = b
            while (c >> e) & 1:
                e += 1
            out = out + low_bits(p, e) - low_bits(p, b)
            b = e
        else:
            b += 1
    return out


def logistic(a: Term) -> Term:
    """``1 / (1 + exp(-a))`` (as ``verigrad.frontends.ops.sigmoid``)."""
    return Pow(add(Num(1), fn("exp", neg(a))), -1)
