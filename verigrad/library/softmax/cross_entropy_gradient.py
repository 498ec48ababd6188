"""The gradient of the cross-entropy loss -log softmax(x)_y with respect to the logits is
softmax(x) - onehot(y)."""
from verigrad.proof import *


@apply
def apply(x, y):
    n = x.shape[0]
    k = Symbol.k(integer=True)
    return Equality(grad(-log(softmax(x)[y]), x), softmax(x) - Lamda[k:n](KroneckerDelta(k, y)))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    y = Symbol.y(integer=True, domain=[0, n - 1])
    Eq << apply(x, y)

    from verigrad.library.softmax import cross_entropy_is_logsumexp_minus_logit as ce
    Eq << ce.apply(x, y)

    Eq << Eq[0].this.lhs.function.args[0].subs(Eq[-1])

    Eq << Eq[-1].this.lhs.doit()
