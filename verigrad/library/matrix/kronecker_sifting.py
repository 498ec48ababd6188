"""The Kronecker delta sifts a sum: sum_j delta(i, j) x_j = x_i."""
from verigrad.proof import *


@apply
def apply(x, i):
    n = x.shape[0]
    j = Symbol.j(integer=True)
    return Equality(Sum[j:n](KroneckerDelta(i, j) * x[j]), x[i])


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    i = Symbol.i(integer=True, domain=[0, n - 1])
    Eq << apply(x, i)

    Eq << Eq[0].this.lhs.simplify()
