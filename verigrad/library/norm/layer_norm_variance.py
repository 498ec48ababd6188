"""The output of layer norm has mean square var / (var + eps): with eps -> 0 its
variance is one. sum_i layer_norm(x, eps)_i^2 / n = var(x) / (var(x) + eps)."""
from verigrad.proof import *


@apply
def apply(x, eps):
    n = x.shape[0]
    i = Symbol.i(integer=True)
    return Equality(Sum[i:n](layer_norm(x, eps)[i] ** 2) / n, var(x) / (var(x) + eps))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    eps = Symbol.eps(positive=True)
    Eq << apply(x, eps)

    Eq << Eq[0].this.lhs.find(Indexed).definition

    i = Symbol.i(integer=True, domain=[0, n - 1])
    Eq << Eq[-1].this.lhs.become(Sum[i:n]((x[i] - mean(x)) ** 2) / (var(x) + eps) / n)

    Eq << Eq[-1].this.rhs.find(var).definition
