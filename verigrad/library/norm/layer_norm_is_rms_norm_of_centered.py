"""Layer norm is RMS norm applied to the centred input: layer_norm(x) = rms_norm(x - mean(x))."""
from verigrad.proof import *


@apply
def apply(x, eps):
    return Equality(layer_norm(x, eps), rms_norm(x - mean(x), eps))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    eps = Symbol.eps(positive=True)
    Eq << apply(x, eps)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.rhs.definition
