"""The input cotangent of a dense layer y = x W + b is dY W^T."""
from verigrad.proof import *


@apply
def apply(x, W, b, dY):
    return Equality(vjp(x @ W + b, x, dY), dY @ W.T)


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(m, n), real=True)
    W = Symbol.W(shape=(n, d), real=True)
    b = Symbol.b(shape=(d,), real=True)
    dY = Symbol.dY(shape=(m, d), real=True)
    Eq << apply(x, W, b, dY)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.rhs.as_Sum()
