"""Masking after the softmax and renormalizing is the masked softmax: for the causal mask,
[j <= i] p_ij / sum_l [l <= i] p_il = [j <= i] exp(s_ij) / sum_l [l <= i] exp(s_il) with
p = softmax(s)."""
from verigrad.proof import *


@apply
def apply(s, i, j):
    n = s.shape[0]
    l = Symbol.l(integer=True)
    p = softmax(s)
    return Equality(Bool(j <= i) * p[i, j] / Sum[l:n](Bool(l <= i) * p[i, l]),
                    Bool(j <= i) * exp(s[i, j]) / Sum[l:n](Bool(l <= i) * exp(s[i, l])))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    s = Symbol.s(shape=(n, n), real=True)
    i = Symbol.i(integer=True, domain=[0, n - 1])
    j = Symbol.j(integer=True, domain=[0, n - 1])
    Eq << apply(s, i, j)

    Eq << Eq[0].this.lhs.find(softmax).definition

    Eq << Eq[-1].this.lhs.find(softmax).definition

    Eq << Eq[-1].this.lhs.simplify()
