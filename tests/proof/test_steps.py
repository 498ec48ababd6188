"""Every step is re-checked by the kernel: wrong steps and wrong tactics are rejected."""
from verigrad.kernel import Theorem
from verigrad.proof import tactics
from verigrad.proof.expressions import Number

HEADER = "from verigrad.proof import *\n"


def line_of(src: str, text: str) -> int:
    return next(k for k, line in enumerate(src.splitlines(), 1) if text in line)

SUMS_TO_ONE = HEADER + """
@apply
def apply(n):
    x = Symbol.x(shape=(n,), real=True)
    j = Symbol.j(integer=True)
    return Equality(Sum[j:n](softmax(x)[j]), 1)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    Eq << apply(n)
    Eq << Eq[0].this.lhs.function.definition
    Eq << Eq[-1].this.lhs.simplify()
"""


def test_a_proof_proves_its_goal_with_a_kernel_theorem(theorem):
    res = theorem(SUMS_TO_ONE)
    assert res.status == "proved", res.reason
    assert all(isinstance(th, Theorem) for th in res.theorems)
    (th,) = res.theorems
    goal = res.goals[0]
    assert (th.lhs, th.rhs) == goal.pair and not th.hyps
    assert "exp_add" not in th.axioms() and "ring" in th.axioms()


def test_a_sign_flipped_hand_written_step_is_rejected_at_its_line(theorem):
    src = HEADER + """
@apply
def apply(n):
    x = Symbol.x(shape=(n,), real=True)
    y = Symbol.y(shape=(n,), real=True)
    j = Symbol.j(integer=True)
    return Equality(Sum[j:n](x[j] - y[j]), Sum[j:n](x[j]) - Sum[j:n](y[j]))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    Eq << apply(n)
    x, y = Symbol.x(shape=(n,), real=True), Symbol.y(shape=(n,), real=True)
    j = Symbol.j(integer=True, domain=[0, n - 1])
    Eq << Equality(Sum[j:n](x[j] - y[j]), Sum[j:n](x[j]) + Sum[j:n](y[j]))
"""
    res = theorem(src)
    assert res.status == "failed"
    assert res.line == line_of(src, "Eq << Equality(")
    assert "cannot show" in res.reason and "residual" in res.reason


def test_a_tactic_that_proposes_a_wrong_rewrite_cannot_prove_anything(theorem, monkeypatch):
    def wrong_simplify(node, ctx):
        return Number(1)      # claims the sum simplifies to 1, whatever it is
    monkeypatch.setitem(tactics.TACTICS, "simplify", (wrong_simplify, False))
    src = HEADER + """
@apply
def apply(n):
    x = Symbol.x(shape=(n,), real=True)
    j = Symbol.j(integer=True)
    return Equality(Sum[j:n](x[j]), 1)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    Eq << apply(n)
    Eq << Eq[0].this.lhs.simplify()
"""
    res = theorem(src)
    assert res.status == "failed" and res.line == line_of(src, "simplify()")
    assert not res.theorems
    assert all(g.theorem is None for g in res.goals)


def test_the_same_wrong_tactic_on_a_true_goal_is_still_rejected(theorem, monkeypatch):
    def wrong_definition(node, ctx):
        return Number(0) * node + 1, None
    monkeypatch.setitem(tactics.TACTICS, "definition", (wrong_definition, True))
    res = theorem(SUMS_TO_ONE)
    assert res.status == "failed" and "cannot show" in res.reason
