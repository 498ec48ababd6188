"""The numerically stable softmax, with the largest logit subtracted first, is softmax:
softmax(x - max(x)) = softmax(x). The max cancels, so it needs no derivative."""
from verigrad.proof import *


@apply
def apply(x):
    return Equality(softmax(x - vmax(x)), softmax(x))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x)

    from verigrad.library.softmax import shift_invariance
    Eq << shift_invariance.apply(x, -vmax(x))
