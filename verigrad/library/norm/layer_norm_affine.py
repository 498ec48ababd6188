"""The affine layer norm scales and shifts the plain one:
layer_norm(x, eps, gamma, beta) = gamma * layer_norm(x, eps) + beta."""
from verigrad.proof import *


@apply
def apply(x, eps, gamma, beta):
    return Equality(layer_norm(x, eps, gamma, beta), gamma * layer_norm(x, eps) + beta)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    gamma = Symbol.gamma(shape=(n,), real=True)
    beta = Symbol.beta(shape=(n,), real=True)
    eps = Symbol.eps(positive=True)
    Eq << apply(x, eps, gamma, beta)

    i = Symbol.i(integer=True, domain=[0, n - 1])
    Eq << Eq[0][i]

    Eq << Eq[-1].this.lhs.definition
