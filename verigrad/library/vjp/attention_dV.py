"""The value cotangent of attention softmax(Q K^T / sqrt(d)) V is P^T dY, with P the
attention weights."""
from verigrad.proof import *


@apply
def apply(Q, K, V, dY):
    d = Q.shape[1]
    P = softmax(Q @ K.T / sqrt(d))
    return Equality(vjp(P @ V, V, dY), P.T @ dY)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    Q, K, V, dY = (Symbol(s, shape=(n, d), real=True) for s in ("Q", "K", "V", "dY"))
    Eq << apply(Q, K, V, dY)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.rhs.as_Sum()
