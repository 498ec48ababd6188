"""Seed 000 (e): the comprehension delta(k, n) for k < n + 1 is the block vector
[0, ..., 0, 1], the last standard basis vector of length n + 1."""
from verigrad.proof import *


@apply
def apply(n):
    k = Symbol.k(integer=True)
    return Equality(Lamda[k:n + 1](KroneckerDelta(k, n)), BlockMatrix([ZeroMatrix(n), 1]))


@prove
def prove(Eq):
    n = Symbol.n(domain=[2, oo], integer=True)
    Eq << apply(n)

    U = Symbol.U(definition=Eq[0].lhs)
    V = Symbol.V(definition=Eq[0].rhs)

    Eq << U.this.definition
    Eq << V.this.definition

    i = Symbol.i(integer=True, domain=[0, n])

    Eq << Eq[-1][i]

    Eq << U[i].this.definition

    Eq << Eq[-2].this.rhs.as_KroneckerDelta()

    Eq << Eq[-2] - Eq[-1]

    Eq << Eq[-1].reference((i,))

    Eq << Eq[-1].subs(Eq[1]).subs(Eq[2])
