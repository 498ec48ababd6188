"""The derivative of ReLU is the indicator [x > 0], off the kink x = 0 (the side condition
the kernel records)."""
from verigrad.proof import *


@apply
def apply(x):
    return Equality(Derivative(relu(x), x), Bool(x > 0))


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.arg.definition

    Eq << Eq[-1].this.lhs.doit()
