"""Block matrices add block by block:
[[A, B], [C, D]] + [[E, F], [G, H]] = [[A + E, B + F], [C + G, D + H]]."""
from verigrad.proof import *


@apply
def apply(A, B, C, D, E, F, G, H):
    return Equality(BlockMatrix([[A, B], [C, D]]) + BlockMatrix([[E, F], [G, H]]),
                    BlockMatrix([[A + E, B + F], [C + G, D + H]]))


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    p = Symbol.p(domain=[1, oo], integer=True)
    q = Symbol.q(domain=[1, oo], integer=True)
    A, E = (Symbol(s, shape=(m, p), real=True) for s in "AE")
    B, F = (Symbol(s, shape=(m, q), real=True) for s in "BF")
    C, G = (Symbol(s, shape=(n, p), real=True) for s in "CG")
    D, H = (Symbol(s, shape=(n, q), real=True) for s in "DH")
    Eq << apply(A, B, C, D, E, F, G, H)

    i = Symbol.i(integer=True, domain=[0, m + n - 1])
    j = Symbol.j(integer=True, domain=[0, p + q - 1])
    Eq << Eq[0][i, j]

    Eq << Eq[-1].this.lhs.as_KroneckerDelta()

    Eq << Eq[-1].this.rhs.as_KroneckerDelta()

    Eq << Eq[-1].reference((j,), (i,))
