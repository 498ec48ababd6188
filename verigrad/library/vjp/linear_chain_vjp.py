"""Chain rule through two linear maps: vjp(x W1 W2, x, dy) = dy W2^T W1^T."""
from verigrad.proof import *


@apply
def apply(x, W1, W2, dy):
    return Equality(vjp(x @ W1 @ W2, x, dy), dy @ W2.T @ W1.T)


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    h = Symbol.h(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(m, n), real=True)
    W1 = Symbol.W1(shape=(n, h), real=True)
    W2 = Symbol.W2(shape=(h, d), real=True)
    dy = Symbol.dy(shape=(m, d), real=True)
    Eq << apply(x, W1, W2, dy)

    Eq << Eq[0].this.lhs.definition
