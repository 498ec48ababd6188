"""A decoding step with a KV cache is the last row of causal attention: when the cache
holds the keys and values of all m tokens so far, the new token's output
softmax(q K^T / sqrt(d)) V (q = Q[m - 1]) equals row m - 1 of causal attention over the
m tokens, which masks nothing in that row."""
from verigrad.proof import *


@apply
def apply(Q, K, V):
    m, d = Q.shape
    i = Symbol.i(integer=True)
    j = Symbol.j(integer=True)
    l = Symbol.l(integer=True)
    s = Q @ K.T / sqrt(d)
    P = Symbol.P(definition=Lamda[j:m, i:m](Bool(j <= i) * exp(s[i, j]) / Sum[l:m](Bool(l <= i) * exp(s[i, l]))))
    return Equality((P @ V)[m - 1], softmax(Q[m - 1] @ K.T / sqrt(d)) @ V)


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    Q = Symbol.Q(shape=(m, d), real=True)
    K = Symbol.K(shape=(m, d), real=True)
    V = Symbol.V(shape=(m, d), real=True)
    Eq << apply(Q, K, V)

    Eq << Eq[1].this.lhs.simplify()

    Eq << Eq[-1].this.lhs.as_Sum()

    Eq << Eq[-1].this.lhs.function.args[0].definition

    Eq << Eq[-1].this.rhs.as_Sum()

    Eq << Eq[-1].this.rhs.function.args[0].definition
