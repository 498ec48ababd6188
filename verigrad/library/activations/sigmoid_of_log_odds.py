"""The sigmoid inverts the log-odds: sigma(log(p / (1 - p))) = p for 0 < p < 1 (written
with q = 1 - p > 0)."""
from verigrad.proof import *


@apply
def apply(p, q):
    return Equality(sigmoid(log(p / q)), p / (p + q))


@prove
def prove(Eq):
    p = Symbol.p(positive=True)
    q = Symbol.q(positive=True)
    Eq << apply(p, q)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.lhs.become(1 / (1 + q / p))
