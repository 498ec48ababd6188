"""The output of RMS norm has mean square ms / (ms + eps), with ms the mean square of x."""
from verigrad.proof import *


@apply
def apply(x, eps):
    n = x.shape[0]
    i = Symbol.i(integer=True)
    ms = Sum[i:n](x[i] ** 2) / n
    return Equality(Sum[i:n](rms_norm(x, eps)[i] ** 2) / n, ms / (ms + eps))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    eps = Symbol.eps(positive=True)
    Eq << apply(x, eps)

    Eq << Eq[0].this.lhs.find(Indexed).definition
