"""Softmax of a matrix acts row by row: softmax(X)[i] = softmax(X[i])."""
from verigrad.proof import *


@apply
def apply(X, i):
    return Equality(softmax(X)[i], softmax(X[i]))


@prove
def prove(Eq):
    m = Symbol.m(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    X = Symbol.X(shape=(m, n), real=True)
    i = Symbol.i(integer=True, domain=[0, m - 1])
    Eq << apply(X, i)

    Eq << Eq[0].this.lhs.base.definition

    Eq << Eq[-1].this.rhs.definition
