"""The backward pass of softmax: with p = softmax(x), dx = p * (dy - <dy, p>)."""
from verigrad.proof import *


@apply
def apply(x, dy):
    p = softmax(x)
    return Equality(vjp(p, x, dy), p * (dy - dy @ p))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    dy = Symbol.dy(shape=(n,), real=True)
    Eq << apply(x, dy)

    Eq << Eq[0].this.lhs.definition

    i = Symbol.i(integer=True, domain=[0, n - 1])
    k = Symbol.k(integer=True, domain=[0, n - 1])
    from verigrad.library.softmax import jacobian
    Eq << jacobian.apply(x, i, k)

    Eq << Eq[-2].this.lhs.function.function.args[1].subs(Eq[-1])
