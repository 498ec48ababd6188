"""The entries of softmax(x) sum to one: sum_j softmax(x)_j = 1."""
from verigrad.proof import *


@apply
def apply(x):
    n = x.shape[0]
    j = Symbol.j(integer=True)
    return Equality(Sum[j:n](softmax(x)[j]), 1)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.function.definition

    Eq << Eq[-1].this.lhs.simplify()
