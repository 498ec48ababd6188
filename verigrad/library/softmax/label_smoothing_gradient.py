"""Label smoothing: with the target t = (1 - eps) onehot(y) + eps / n, the gradient of the
cross-entropy with respect to the logits is softmax(x) - t."""
from verigrad.proof import *


@apply
def apply(x, y, eps):
    n = x.shape[0]
    j = Symbol.j(integer=True)
    k = Symbol.k(integer=True)
    t = Symbol.t(definition=Lamda[k:n]((1 - eps) * KroneckerDelta(k, y) + eps / n))
    loss = -Sum[j:n](t[j] * log(softmax(x)[j]))
    return Equality(grad(loss, x), softmax(x) - t)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    y = Symbol.y(integer=True, domain=[0, n - 1])
    eps = Symbol.eps(real=True)
    Eq << apply(x, y, eps)

    j = Symbol.j(integer=True)
    t = Eq[0].lhs.base
    Eq << Equality(Sum[j:n](t[j]), 1)

    from verigrad.library.softmax import cross_entropy_gradient_soft_targets as soft
    Eq << soft.apply(x, t.definition)

    Eq << Eq[-1].this.rhs.simplify()
