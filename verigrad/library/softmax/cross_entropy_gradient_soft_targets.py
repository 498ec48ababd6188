"""With a target distribution t instead of a class, the gradient of the cross-entropy
-sum_j t_j log softmax(x)_j is softmax(x) * sum(t) - t, which is softmax(x) - t when t
sums to one."""
from verigrad.proof import *


@apply
def apply(x, t):
    n = x.shape[0]
    j = Symbol.j(integer=True)
    loss = -Sum[j:n](t[j] * log(softmax(x)[j]))
    return Equality(grad(loss, x), softmax(x) * Sum[j:n](t[j]) - t)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    t = Symbol.t(shape=(n,), real=True)
    Eq << apply(x, t)

    Eq << Eq[0].this.lhs.doit()
