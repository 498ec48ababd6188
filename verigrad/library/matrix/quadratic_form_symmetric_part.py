"""A quadratic form only sees the symmetric part of its matrix:
x^T A x = x^T ((A + A^T) / 2) x."""
from verigrad.proof import *


@apply
def apply(A, x):
    return Equality(x @ A @ x, x @ ((A + A.T) / 2) @ x)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(n, n), real=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(A, x)

    Eq << Eq[0].this.rhs.as_Sum()

    Eq << Eq[-1].this.lhs.as_Sum()
