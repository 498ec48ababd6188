"""A bias added to every key does not change the attention weights: row i of the
scores only moves by the constant q_i . b, and softmax ignores constants:
softmax(Q (K + b)^T / sqrt(d)) = softmax(Q K^T / sqrt(d))."""
from verigrad.proof import *


@apply
def apply(Q, K, b):
    d = Q.shape[1]
    return Equality(softmax(Q @ (K + b).T / sqrt(d)), softmax(Q @ K.T / sqrt(d)))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    Q = Symbol.Q(shape=(n, d), real=True)
    K = Symbol.K(shape=(n, d), real=True)
    b = Symbol.b(shape=(d,), real=True)
    Eq << apply(Q, K, b)

    i = Symbol.i(integer=True, domain=[0, n - 1])
    Eq << Eq[0][i]

    from verigrad.library.softmax import shift_invariance
    Eq << shift_invariance.apply(Q[i] @ K.T / sqrt(d), Q[i] @ b / sqrt(d))

    Eq << Eq[-2].this.lhs.arg.become(Eq[-1].lhs.arg)

    Eq << Eq[-1].reference((i,))
