"""The gradient of the mean squared error sum_i (x_i - t_i)^2 / n is 2 (x - t) / n."""
from verigrad.proof import *


@apply
def apply(x, t):
    n = x.shape[0]
    i = Symbol.i(integer=True)
    return Equality(grad(Sum[i:n]((x[i] - t[i]) ** 2) / n, x), 2 * (x - t) / n)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    t = Symbol.t(shape=(n,), real=True)
    Eq << apply(x, t)

    Eq << Eq[0].this.lhs.doit()
