"""Drop path with every sample dropped (mask of zeros) is zero, whatever the keep rate."""
from verigrad.proof import *


@apply
def apply(x, keep):
    B, d = x.shape
    return Equality(drop_path(x, ZeroMatrix(B), keep), ZeroMatrix(B, d))


@prove
def prove(Eq):
    B = Symbol.B(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(B, d), real=True)
    keep = Symbol.keep(positive=True)
    Eq << apply(x, keep)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.lhs.simplify()
