"""The trace of an outer product is the inner product: tr(u v^T) = u . v."""
from verigrad.proof import *


@apply
def apply(u, v):
    n = u.shape[0]
    i = Symbol.i(integer=True)
    j = Symbol.j(integer=True)
    return Equality(trace(Lamda[j:n, i:n](u[i] * v[j])), u @ v)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    u = Symbol.u(shape=(n,), real=True)
    v = Symbol.v(shape=(n,), real=True)
    Eq << apply(u, v)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.lhs.simplify()

    Eq << Eq[-1].this.rhs.as_Sum()
