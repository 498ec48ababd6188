"""Scaling the queries by a and the keys by 1/a leaves the attention scores unchanged:
(a Q) (K / a)^T = Q K^T for a > 0."""
from verigrad.proof import *


@apply
def apply(Q, K, a):
    return Equality((a * Q) @ (K / a).T, Q @ K.T)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    Q = Symbol.Q(shape=(n, d), real=True)
    K = Symbol.K(shape=(n, d), real=True)
    a = Symbol.a(positive=True)
    Eq << apply(Q, K, a)

    Eq << Eq[0].this.lhs.as_Sum()

    Eq << Eq[-1].this.rhs.as_Sum()
