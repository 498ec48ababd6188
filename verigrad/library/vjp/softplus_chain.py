"""Chain rule through an affine map: d softplus(w x + b) / dx = w sigma(w x + b)."""
from verigrad.proof import *


@apply
def apply(x, w, b):
    return Equality(Derivative(softplus(w * x + b), x), w * sigmoid(w * x + b))


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    w = Symbol.w(real=True)
    b = Symbol.b(real=True)
    Eq << apply(x, w, b)

    Eq << Eq[0].this.lhs.arg.definition

    Eq << Eq[-1].this.rhs.find(sigmoid).definition
