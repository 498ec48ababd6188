"""The trace is invariant under cyclic permutation: tr(A B) = tr(B A), for A of shape
(m, n) and B of shape (n, m)."""
from verigrad.proof import *


@apply
def apply(A, B):
    return Equality(trace(A @ B), trace(B @ A))


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(m, n), real=True)
    B = Symbol.B(shape=(n, m), real=True)
    Eq << apply(A, B)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.rhs.definition

    Eq << Eq[-1].this.lhs.function.expand()

    Eq << Eq[-1].this.rhs.function.expand()
