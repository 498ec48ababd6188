"""Every row of the attention matrix softmax(Q K^T / sqrt(d)) is a probability vector:
sum_j softmax(Q K^T / sqrt(d))_ij = 1."""
from verigrad.proof import *


@apply
def apply(Q, K, i):
    n, d = Q.shape
    j = Symbol.j(integer=True)
    return Equality(Sum[j:n](softmax(Q @ K.T / sqrt(d))[i, j]), 1)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    Q = Symbol.Q(shape=(n, d), real=True)
    K = Symbol.K(shape=(n, d), real=True)
    i = Symbol.i(integer=True, domain=[0, n - 1])
    Eq << apply(Q, K, i)

    Eq << Eq[0].this.lhs.function.definition

    Eq << Eq[-1].this.lhs.simplify()
