"""The derivative of GELU x Phi(x) is Phi(x) + x phi(x), with Phi the normal CDF
(1 + erf(x / sqrt 2)) / 2 and phi the normal density exp(-x^2 / 2) / sqrt(2 pi)."""
from verigrad.proof import *


@apply
def apply(x):
    Phi = (1 + erf(x / sqrt(2))) / 2
    phi = exp(-x ** 2 / 2) / sqrt(2 * pi)
    return Equality(Derivative(gelu(x), x), Phi + x * phi)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)

    Eq << Eq[0].this.lhs.arg.definition
