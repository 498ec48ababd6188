"""GELU minus its mirror image is the identity: gelu(x) - gelu(-x) = x (erf is odd)."""
from verigrad.proof import *


@apply
def apply(x):
    return Equality(gelu(x) - gelu(-x), x)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.args[0].definition

    Eq << Eq[-1].this.lhs.args[1].find(gelu).definition
