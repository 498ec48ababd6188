"""The output of layer norm (without its affine part) has mean zero:
sum_i layer_norm(x, eps)_i = 0."""
from verigrad.proof import *


@apply
def apply(x, eps):
    n = x.shape[0]
    i = Symbol.i(integer=True)
    return Equality(Sum[i:n](layer_norm(x, eps)[i]), 0)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    eps = Symbol.eps(positive=True)
    Eq << apply(x, eps)

    Eq << Eq[0].this.lhs.function.definition

    Eq << Eq[-1].this.lhs.function.find(mean).definition

    Eq << Eq[-1].this.lhs.simplify()
