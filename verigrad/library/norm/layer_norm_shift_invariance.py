"""Layer norm does not see a constant added to every feature: layer_norm(x + c) = layer_norm(x)."""
from verigrad.proof import *


@apply
def apply(x, c, eps):
    return Equality(layer_norm(x + c, eps), layer_norm(x, eps))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    c = Symbol.c(real=True)
    eps = Symbol.eps(positive=True)
    Eq << apply(x, c, eps)

    i = Symbol.i(integer=True, domain=[0, n - 1])
    Eq << Eq[0][i]

    Eq << Eq[-1].this.lhs.definition

    Eq << Eq[-1].this.rhs.definition
