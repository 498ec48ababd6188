"""Transposing a 2 x 2 block matrix transposes the blocks and swaps the off-diagonal ones:
[[A, B], [C, D]]^T = [[A^T, C^T], [B^T, D^T]]."""
from verigrad.proof import *


@apply
def apply(A, B, C, D):
    return Equality(BlockMatrix([[A, B], [C, D]]).T, BlockMatrix([[A.T, C.T], [B.T, D.T]]))


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    p = Symbol.p(domain=[1, oo], integer=True)
    q = Symbol.q(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(m, p), real=True)
    B = Symbol.B(shape=(m, q), real=True)
    C = Symbol.C(shape=(n, p), real=True)
    D = Symbol.D(shape=(n, q), real=True)
    Eq << apply(A, B, C, D)

    i = Symbol.i(integer=True, domain=[0, p + q - 1])
    j = Symbol.j(integer=True, domain=[0, m + n - 1])
    Eq << Eq[0][i, j]

    Eq << Eq[-1].this.lhs.as_KroneckerDelta()

    Eq << Eq[-1].this.rhs.as_KroneckerDelta()

    Eq << Eq[-1].reference((j,), (i,))
