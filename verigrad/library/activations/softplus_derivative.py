"""The derivative of softplus(x) = log(1 + exp(x)) is the sigmoid."""
from verigrad.proof import *


@apply
def apply(x):
    return Equality(Derivative(softplus(x), x), sigmoid(x))


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.doit()

    Eq << Eq[-1].this.rhs.definition
