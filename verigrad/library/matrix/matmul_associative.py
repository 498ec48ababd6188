"""Matrix multiplication is associative: (A B) C = A (B C)."""
from verigrad.proof import *


@apply
def apply(A, B, C):
    return Equality(MatMul(A @ B, C, flat=False), MatMul(A, B @ C, flat=False))


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    p = Symbol.p(domain=[1, oo], integer=True)
    q = Symbol.q(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(m, n), real=True)
    B = Symbol.B(shape=(n, p), real=True)
    C = Symbol.C(shape=(p, q), real=True)
    Eq << apply(A, B, C)

    Eq << Eq[0].this.lhs.as_Sum()

    Eq << Eq[-1].this.rhs.as_Sum()
