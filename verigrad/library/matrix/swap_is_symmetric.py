"""A swap matrix is symmetric: S_n(i, j)^T = S_n(i, j)."""
from verigrad.proof import *


@apply
def apply(n, i, j):
    return Equality(Swap(n, i, j).T, Swap(n, i, j))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    i = Symbol.i(integer=True, domain=[0, n - 1])
    j = Symbol.j(integer=True, domain=[0, n - 1])
    Eq << apply(n, i, j)

    h = Symbol.h(integer=True, domain=[0, n - 1])
    k = Symbol.k(integer=True, domain=[0, n - 1])
    Eq << Eq[0][h, k]

    Eq << Eq[-1].this.lhs.as_KroneckerDelta()

    Eq << Eq[-1].this.rhs.as_KroneckerDelta()

    Eq << Eq[-1].reference((k,), (h,))
