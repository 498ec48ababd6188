"""The trace of a product of three matrices is invariant under cyclic permutation:
tr(A B C) = tr(C A B)."""
from verigrad.proof import *


@apply
def apply(A, B, C):
    return Equality(trace(A @ B @ C), trace(C @ A @ B))


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    p = Symbol.p(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(m, n), real=True)
    B = Symbol.B(shape=(n, p), real=True)
    C = Symbol.C(shape=(p, m), real=True)
    Eq << apply(A, B, C)

    from verigrad.library.matrix import trace_cyclic
    Eq << trace_cyclic.apply(A @ B, C)

    Eq << Eq[-1].this.rhs.arg.become(C @ A @ B)
