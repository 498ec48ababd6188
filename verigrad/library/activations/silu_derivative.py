"""The derivative of SiLU (swish) x sigma(x) is sigma(x) (1 + x (1 - sigma(x)))."""
from verigrad.proof import *


@apply
def apply(x):
    return Equality(Derivative(silu(x), x), sigmoid(x) * (1 + x * (1 - sigmoid(x))))


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.arg.definition

    Eq << Eq[-1].this.lhs.doit()
