"""A matrix and its transpose have the same trace: tr(A^T) = tr(A)."""
from verigrad.proof import *


@apply
def apply(A):
    return Equality(trace(A.T), trace(A))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(n, n), real=True)
    Eq << apply(A)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.lhs.simplify()

    Eq << Eq[-1].this.rhs.definition
