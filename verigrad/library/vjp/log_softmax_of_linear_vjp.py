"""Chain rule through a linear map into log-softmax (a classifier head):
vjp(log_softmax(W x), x, dy) = W^T (dy - softmax(W x) sum(dy))."""
from verigrad.proof import *


@apply
def apply(W, x, dy):
    c = W.shape[0]
    j = Symbol.j(integer=True)
    return Equality(vjp(log_softmax(W @ x), x, dy), W.T @ (dy - softmax(W @ x) * Sum[j:c](dy[j])))


@prove
def prove(Eq):
    c = Symbol.c(domain=[1, oo], integer=True)
    n = Symbol.n(domain=[1, oo], integer=True)
    W = Symbol.W(shape=(c, n), real=True)
    x = Symbol.x(shape=(n,), real=True)
    dy = Symbol.dy(shape=(c,), real=True)
    Eq << apply(W, x, dy)

    Eq << Eq[0].this.lhs.definition
