"""The key cotangent of attention: dK = dS^T Q / sqrt(d), with dS as for dQ."""
from verigrad.proof import *


@apply
def apply(Q, K, V, dY):
    n, d = Q.shape
    i = Symbol.i(integer=True)
    j = Symbol.j(integer=True)
    l = Symbol.l(integer=True)
    P = softmax(Q @ K.T / sqrt(d))
    dP = dY @ V.T
    dS = Lamda[j:n, i:n](P[i, j] * (dP[i, j] - Sum[l:n](dP[i, l] * P[i, l])))
    return Equality(vjp(P @ V, K, dY), dS.T @ Q / sqrt(d))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    Q, K, V, dY = (Symbol(s, shape=(n, d), real=True) for s in ("Q", "K", "V", "dY"))
    Eq << apply(Q, K, V, dY)

    Eq << Eq[0].this.lhs.definition
