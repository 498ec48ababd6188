"""Matrix multiplication distributes over addition: A (B + C) = A B + A C."""
from verigrad.proof import *


@apply
def apply(A, B, C):
    return Equality(A @ (B + C), A @ B + A @ C)


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    p = Symbol.p(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(m, n), real=True)
    B = Symbol.B(shape=(n, p), real=True)
    C = Symbol.C(shape=(n, p), real=True)
    Eq << apply(A, B, C)

    Eq << Eq[0].this.lhs.distribute()
