"""The Jacobian of softmax: d softmax(x)_i / d x_k = p_i (delta_ik - p_k) with p = softmax(x)."""
from verigrad.proof import *


@apply
def apply(x, i, k):
    p = softmax(x)
    return Equality(Derivative(p[i], x[k]), p[i] * (KroneckerDelta(i, k) - p[k]))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    i = Symbol.i(integer=True, domain=[0, n - 1])
    k = Symbol.k(integer=True, domain=[0, n - 1])
    Eq << apply(x, i, k)

    Eq << Eq[0].this.lhs.doit()
