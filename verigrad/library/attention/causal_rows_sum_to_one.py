"""Causal attention weights, a softmax over the keys j <= i written with the indicator
[j <= i], sum to one in every row (the kernel records that the masked normalizer is
nonzero, as key i itself is never masked)."""
from verigrad.proof import *


@apply
def apply(s):
    n = s.shape[0]
    i = Symbol.i(integer=True)
    j = Symbol.j(integer=True)
    l = Symbol.l(integer=True)
    P = Symbol.P(definition=Lamda[j:n, i:n](Bool(j <= i) * exp(s[i, j]) / Sum[l:n](Bool(l <= i) * exp(s[i, l]))))
    r = Symbol.r(integer=True, domain=[0, n - 1])
    return Equality(Sum[j:n](P[r, j]), 1)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    s = Symbol.s(shape=(n, n), real=True)
    Eq << apply(s)

    Eq << Eq[1].this.lhs.function.definition

    Eq << Eq[-1].this.lhs.simplify()
