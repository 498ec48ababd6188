"""Transposing twice gives the matrix back: (A^T)^T = A."""
from verigrad.proof import *


@apply
def apply(A):
    return Equality(A.T.T, A)


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(m, n), real=True)
    Eq << apply(A)

    i = Symbol.i(integer=True, domain=[0, m - 1])
    j = Symbol.j(integer=True, domain=[0, n - 1])
    Eq << Eq[0][i, j]

    Eq << Eq[-1].reference((j,), (i,))
