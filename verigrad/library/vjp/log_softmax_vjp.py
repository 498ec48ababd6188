"""The backward pass of log-softmax: dx = dy - softmax(x) sum(dy)."""
from verigrad.proof import *


@apply
def apply(x, dy):
    n = x.shape[0]
    j = Symbol.j(integer=True)
    return Equality(vjp(log_softmax(x), x, dy), dy - softmax(x) * Sum[j:n](dy[j]))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    dy = Symbol.dy(shape=(n,), real=True)
    Eq << apply(x, dy)

    Eq << Eq[0].this.lhs.definition
