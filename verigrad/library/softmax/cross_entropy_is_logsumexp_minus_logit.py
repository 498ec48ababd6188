"""The cross-entropy of logits x against the class y is logsumexp(x) - x_y:
-log softmax(x)_y = logsumexp(x) - x_y."""
from verigrad.proof import *


@apply
def apply(x, y):
    return Equality(-log(softmax(x)[y]), logsumexp(x) - x[y])


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    y = Symbol.y(integer=True, domain=[0, n - 1])
    Eq << apply(x, y)

    from verigrad.library.softmax import log_softmax as lemma
    Eq << lemma.apply(x)

    Eq << Eq[-1][y]

    Eq << -Eq[-1]
