"""Swapping twice is the identity: S_n(i, j) S_n(i, j) = I_n."""
from verigrad.proof import *


@apply
def apply(n, i, j):
    return Equality(Swap(n, i, j) @ Swap(n, i, j), Identity(n))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    i = Symbol.i(integer=True, domain=[0, n - 1])
    j = Symbol.j(integer=True, domain=[0, n - 1])
    Eq << apply(n, i, j)

    Eq << Eq[0].this.lhs.as_Sum()

    Eq << Eq[-1].this.lhs.as_KroneckerDelta()

    Eq << Eq[-1].this.rhs.as_KroneckerDelta()
