"""log sigma(x) = -softplus(-x): the numerically stable form of the log-sigmoid."""
from verigrad.proof import *


@apply
def apply(x):
    return Equality(log(sigmoid(x)), -softplus(-x))


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.arg.definition

    Eq << Eq[-1].this.rhs.find(softplus).definition
