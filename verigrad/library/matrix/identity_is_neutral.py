"""The identity matrix is neutral for multiplication: I A = A and A I = A."""
from verigrad.proof import *


@apply
def apply(A):
    m, n = A.shape
    return Equality(Identity(m) @ A, A), Equality(A @ Identity(n), A)


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(m, n), real=True)
    Eq << apply(A)

    Eq << Eq[0].this.lhs.as_Sum()

    Eq << Eq[-1].this.lhs.as_KroneckerDelta()

    Eq << Eq[-1].this.lhs.simplify()

    Eq << Eq[1].this.lhs.as_Sum()

    Eq << Eq[-1].this.lhs.as_KroneckerDelta()

    Eq << Eq[-1].this.lhs.simplify()
