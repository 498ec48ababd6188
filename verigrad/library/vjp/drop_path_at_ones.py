"""Drop path with every sample kept (mask of ones) and keep probability 1 is the identity."""
from verigrad.proof import *


@apply
def apply(x):
    B = x.shape[0]
    return Equality(drop_path(x, OneMatrix(B), 1), x)


@prove
def prove(Eq):
    B = Symbol.B(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(B, d), real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.lhs.simplify()
