"""Chain rule through a residual block x + tanh(x W): the cotangent is the skip path dy
plus the branch (dy * (1 - tanh(x W)^2)) W^T."""
from verigrad.proof import *


@apply
def apply(x, W, dy):
    h = tanh(x @ W)
    return Equality(vjp(x + h, x, dy), dy + (dy * (1 - h ** 2)) @ W.T)


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(m, n), real=True)
    W = Symbol.W(shape=(n, n), real=True)
    dy = Symbol.dy(shape=(m, n), real=True)
    Eq << apply(x, W, dy)

    Eq << Eq[0].this.lhs.definition
