"""The log of softmax is the logits minus their log-sum-exp:
log softmax(x) = x - logsumexp(x), which is how log_softmax is computed."""
from verigrad.proof import *


@apply
def apply(x):
    return Equality(log(softmax(x)), x - logsumexp(x))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x)

    i = Symbol.i(integer=True, domain=[0, n - 1])
    Eq << Eq[0][i]

    Eq << Eq[-1].this.lhs.find(Indexed).definition

    Eq << Eq[-1].this.rhs.find(Indexed).simplify()
