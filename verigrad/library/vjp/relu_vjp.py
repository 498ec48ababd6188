"""The backward pass of ReLU passes the cotangent where the input is positive:
dx = dy * [x > 0] (off the kink x = 0, which the kernel records)."""
from verigrad.proof import *


@apply
def apply(x, dy):
    return Equality(vjp(relu(x), x, dy), dy * Bool(x > 0))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    dy = Symbol.dy(shape=(n,), real=True)
    Eq << apply(x, dy)

    Eq << Eq[0].this.lhs.definition
