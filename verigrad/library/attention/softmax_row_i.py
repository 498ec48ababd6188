"""Seed 000 (c), general form: row i of softmax(Q K^T / sqrt(d)) V is
softmax(Q[i] K^T / sqrt(d)) V: each query attends on its own."""
from verigrad.proof import *


@apply
def apply(n, d, i):
    Q = Symbol.Q(shape=(n, d), real=True)
    K = Symbol.K(shape=(n, d), real=True)
    V = Symbol.V(shape=(n, d), real=True)

    S = Symbol.S(shape=(n, d), definition=softmax(Q @ K.T / sqrt(d)) @ V)

    return Equality(S[i], softmax(Q[i] @ K.T / sqrt(d)) @ V)


@prove
def prove(Eq):
    n = Symbol.n(integer=True, positive=True)
    d = Symbol.d(integer=True, positive=True)
    i = Symbol.i(integer=True, domain=[0, n - 1])

    Eq << apply(n, d, i)

    Eq << Eq[0][i]
