"""Batch norm (normalizing each feature over the batch) gives every feature mean zero
over the batch: sum_b BN(X)[b, c] = 0, with BN(X) = layer_norm(X^T)^T."""
from verigrad.proof import *


@apply
def apply(X, eps):
    m, n = X.shape
    b = Symbol.b(integer=True)
    c = Symbol.c(integer=True, domain=[0, n - 1])
    return Equality(Sum[b:m](layer_norm(X.T, eps).T[b, c]), 0)


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    X = Symbol.X(shape=(m, n), real=True)
    eps = Symbol.eps(positive=True)
    Eq << apply(X, eps)

    c = Eq[0].lhs.function.indices[1]
    from verigrad.library.norm import layer_norm_mean_zero
    Eq << layer_norm_mean_zero.apply(X.T[c], eps)
