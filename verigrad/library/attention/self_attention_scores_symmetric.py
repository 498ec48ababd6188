"""With one projection for queries and keys, the self-attention scores are symmetric:
S = (X W)(X W)^T satisfies S^T = S."""
from verigrad.proof import *


@apply
def apply(X, W):
    S = Symbol.S(definition=(X @ W) @ (X @ W).T)
    return Equality(S.T, S)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    e = Symbol.e(domain=[1, oo], integer=True)
    X = Symbol.X(shape=(n, d), real=True)
    W = Symbol.W(shape=(d, e), real=True)
    Eq << apply(X, W)

    from verigrad.library.matrix import transpose_of_product
    Eq << transpose_of_product.apply(X @ W, (X @ W).T)

    Eq << Eq[-1].this.rhs.args[0].become(X @ W)

    Eq << Eq[-1].this.lhs.arg.become(Eq[0].rhs)
