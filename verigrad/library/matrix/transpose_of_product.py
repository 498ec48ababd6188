"""The transpose of a product is the product of the transposes in reverse order:
(A B)^T = B^T A^T."""
from verigrad.proof import *


@apply
def apply(A, B):
    return Equality((A @ B).T, B.T @ A.T)


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    p = Symbol.p(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(m, n), real=True)
    B = Symbol.B(shape=(n, p), real=True)
    Eq << apply(A, B)

    i = Symbol.i(integer=True, domain=[0, p - 1])
    k = Symbol.k(integer=True, domain=[0, m - 1])
    Eq << Eq[0][i, k]

    Eq << Eq[-1].this.lhs.expand()

    Eq << Eq[-1].this.rhs.expand()

    Eq << Eq[-1].reference((k,), (i,))
