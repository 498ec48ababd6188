"""Softmax does not change when the same number is added to every logit:
softmax(x + c) = softmax(x)."""
from verigrad.proof import *


@apply
def apply(x, c):
    return Equality(softmax(x + c), softmax(x))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    c = Symbol.c(real=True)
    Eq << apply(x, c)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.rhs.definition

    i = Symbol.i(integer=True, domain=[0, n - 1])
    Eq << Eq[-1][i]

    j = Symbol.j(integer=True, domain=[0, n - 1])
    Eq << Equality(Eq[-1].lhs, exp(c) * exp(x[i]) / (exp(c) * Sum[j:n](exp(x[j]))))

    Eq << Eq[-1].reference((i,))
