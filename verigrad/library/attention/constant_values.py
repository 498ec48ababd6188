"""If every value row is the same vector v, every output row of attention is v (the
weights of a row sum to one): softmax(S) V = V when V[j] = v for all j."""
from verigrad.proof import *


@apply
def apply(S, v):
    n = S.shape[0]
    d = v.shape[0]
    j = Symbol.j(integer=True)
    c = Symbol.c(integer=True)
    V = Lamda[c:d, j:n](v[c])
    return Equality(softmax(S) @ V, V)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    S = Symbol.S(shape=(n, n), real=True)
    v = Symbol.v(shape=(d,), real=True)
    Eq << apply(S, v)

    i = Symbol.i(integer=True, domain=[0, n - 1])
    Eq << Eq[0][i]

    Eq << Eq[-1].this.lhs.as_Sum()

    Eq << Eq[-1].this.lhs.find(Indexed).definition

    Eq << Eq[-1].this.lhs.simplify()

    Eq << Eq[-1].reference((i,))
