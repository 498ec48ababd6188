"""The derivative of the sigmoid is sigma(x) (1 - sigma(x))."""
from verigrad.proof import *


@apply
def apply(x):
    return Equality(Derivative(sigmoid(x), x), sigmoid(x) * (1 - sigmoid(x)))


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.doit()

    Eq << Eq[-1].this.rhs.find(sigmoid).definition
