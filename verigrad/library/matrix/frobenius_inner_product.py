"""The Frobenius inner product is a trace: sum_ij A_ij B_ij = tr(A^T B)."""
from verigrad.proof import *


@apply
def apply(A, B):
    m, n = A.shape
    i = Symbol.i(integer=True)
    j = Symbol.j(integer=True)
    return Equality(Sum[j:n, i:m](A[i, j] * B[i, j]), trace(A.T @ B))


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(m, n), real=True)
    B = Symbol.B(shape=(m, n), real=True)
    Eq << apply(A, B)

    Eq << Eq[0].this.rhs.definition

    Eq << Eq[-1].this.rhs.function.expand()
