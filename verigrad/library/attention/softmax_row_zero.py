"""Seed 000 (c): row 0 of softmax(Q K^T / sqrt(d)) V is softmax(Q[0] K^T / sqrt(d)) V:
the first query attends on its own."""
from verigrad.proof import *


@apply
def apply(n, d):
    Q = Symbol.Q(shape=(n, d), real=True)
    K = Symbol.K(shape=(n, d), real=True)
    V = Symbol.V(shape=(n, d), real=True)

    S = Symbol.S(shape=(n, d), definition=softmax(Q @ K.T / sqrt(d)) @ V)

    return Equality(S[0], softmax(Q[0] @ K.T / sqrt(d)) @ V)


@prove
def prove(Eq):
    n = Symbol.n(integer=True, positive=True)
    d = Symbol.d(integer=True, positive=True)

    Eq << apply(n, d)

    Eq << Eq[0][0]
