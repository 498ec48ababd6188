"""Attention is linear in the values: softmax(S) (V + W) = softmax(S) V + softmax(S) W."""
from verigrad.proof import *


@apply
def apply(S, V, W):
    return Equality(softmax(S) @ (V + W), softmax(S) @ V + softmax(S) @ W)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    S = Symbol.S(shape=(n, n), real=True)
    V = Symbol.V(shape=(n, d), real=True)
    W = Symbol.W(shape=(n, d), real=True)
    Eq << apply(S, V, W)

    from verigrad.library.matrix import matmul_distributive
    Eq << matmul_distributive.apply(softmax(S), V, W)
