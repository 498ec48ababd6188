"""Layer norm of a matrix normalizes each row: layer_norm(X)[i] = layer_norm(X[i])."""
from verigrad.proof import *


@apply
def apply(X, eps, i):
    return Equality(layer_norm(X, eps)[i], layer_norm(X[i], eps))


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    X = Symbol.X(shape=(m, n), real=True)
    eps = Symbol.eps(positive=True)
    i = Symbol.i(integer=True, domain=[0, m - 1])
    Eq << apply(X, eps, i)

    Eq << Eq[0].this.lhs.base.definition
