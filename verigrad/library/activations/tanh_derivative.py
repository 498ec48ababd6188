"""The derivative of tanh is 1 - tanh^2."""
from verigrad.proof import *


@apply
def apply(x):
    return Equality(Derivative(tanh(x), x), 1 - tanh(x) ** 2)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.doit()
