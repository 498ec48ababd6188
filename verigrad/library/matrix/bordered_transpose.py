"""Seed 000 (b): bordering commutes with transposition,
[[W, 0], [0, 1]] = ([[W^T, 0], [0, 1]])^T, for a complex n x n matrix W (the proof uses
only ring operations, so it holds over the complex numbers)."""
from verigrad.proof import *


@apply
def apply(W):
    n = W.shape[0]
    return Equality(BlockMatrix([[W, ZeroMatrix(n, 1)], [ZeroMatrix(1, n), 1]]),
                    BlockMatrix([[W.T, ZeroMatrix(n, 1)], [ZeroMatrix(1, n), 1]]).T)


@prove
def prove(Eq):
    n = Symbol.n(domain=[2, oo], integer=True)
    W = Symbol.W(shape=(n, n), complex=True)
    Eq << apply(W)

    U = Symbol.U(definition=Eq[0].lhs)
    V = Symbol.V(definition=Eq[0].rhs)

    Eq << U.this.definition
    Eq << V.this.definition

    i = Symbol.i(integer=True, domain=[0, n])
    j = Symbol.j(integer=True, domain=[0, n])

    Eq << (V[i, j].this.definition, U[i, j].this.definition)

    Eq << (Eq[-1].this.rhs.as_KroneckerDelta(), Eq[-2].this.rhs.as_KroneckerDelta())

    Eq << Eq[-2] - Eq[-1]

    Eq << Eq[-1].reference((j,), (i,))

    Eq << Eq[-1].subs(Eq[1]).subs(Eq[2])

    Eq << Eq[-1].forall((j,), (i,))
