"""The backward pass of layer norm: with xhat = (x - mean x) / sqrt(var x + eps),
dx = (dy - mean(dy) - xhat mean(dy xhat)) / sqrt(var x + eps)."""
from verigrad.proof import *


@apply
def apply(x, eps, dy):
    n = x.shape[0]
    j = Symbol.j(integer=True)
    r = 1 / sqrt(var(x) + eps)
    xhat = (x - mean(x)) * r
    return Equality(vjp(layer_norm(x, eps), x, dy),
                    r * (dy - mean(dy) - xhat * (Sum[j:n](dy[j] * xhat[j]) / n)))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    dy = Symbol.dy(shape=(n,), real=True)
    eps = Symbol.eps(positive=True)
    Eq << apply(x, eps, dy)

    Eq << Eq[0].this.lhs.definition
