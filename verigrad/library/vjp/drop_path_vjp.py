"""The backward pass of drop path is drop path itself, with the same mask:
vjp(drop_path(x, m, keep), x, dy) = drop_path(dy, m, keep)."""
from verigrad.proof import *


@apply
def apply(x, mask, keep, dy):
    return Equality(vjp(drop_path(x, mask, keep), x, dy), drop_path(dy, mask, keep))


@prove
def prove(Eq):
    B = Symbol.B(domain=[1, oo], integer=True)
    d = Symbol.d(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(B, d), real=True)
    dy = Symbol.dy(shape=(B, d), real=True)
    mask = Symbol.mask(shape=(B,), real=True)
    keep = Symbol.keep(positive=True)
    Eq << apply(x, mask, keep, dy)

    Eq << Eq[0].this.lhs.definition

    Eq << Eq[-1].this.rhs.definition
