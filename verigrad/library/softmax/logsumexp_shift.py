"""Adding c to every logit adds c to the log-sum-exp: logsumexp(x + c) = logsumexp(x) + c
(why subtracting the max keeps it exact)."""
from verigrad.proof import *


@apply
def apply(x, c):
    return Equality(logsumexp(x + c), logsumexp(x) + c)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    c = Symbol.c(real=True)
    Eq << apply(x, c)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.rhs.args[1].definition

    j = Symbol.j(integer=True, domain=[0, n - 1])
    Eq << Eq[-1].this.lhs.become(log(exp(c) * Sum[j:n](exp(x[j]))))
