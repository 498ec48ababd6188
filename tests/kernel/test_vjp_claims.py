"""The kernel proves the layer backward passes for ALL sizes, and never a mutant."""
import pytest

from verigrad.certify import showcase
from verigrad.certify.vjp import certify_equal
from verigrad.kernel import Theorem, prove_equal

from verigrad.certify.evaluate import max_difference as numeric_max_diff

PROVED = {c.name: c for c in showcase.proved_claims()}
MUTANTS = {c.name: c for c in showcase.mutant_claims()}


@pytest.mark.parametrize("name", sorted(PROVED))
def test_claim_is_proved_for_all_sizes(name):
    claim = PROVED[name]
    cert = certify_equal(name, claim.lhs, claim.rhs, claim.argument)
    assert cert.status == "PROVED", cert.detail
    assert isinstance(cert.theorem, Theorem)
    # The statement is the claim itself, quantified over the symbolic sizes.
    assert cert.theorem.lhs is claim.lhs and cert.theorem.rhs is claim.rhs
    assert cert.statement.startswith("|- ")
    # by the decision procedure, or (a claim that only reads a Lamda at an index) by conversion
    assert {"ring", "conversion"} & set(cert.axioms)


@pytest.mark.parametrize("name", sorted(PROVED))
def test_proved_claim_agrees_numerically(name):
    """An independent check of each proof: finite differences at small sizes."""
    claim = PROVED[name]
    syms = sorted(set(claim.lhs.sizes) | set(claim.rhs.sizes), key=lambda s: s.name)
    for vals in ([1] * len(syms), [3, 2, 4][: len(syms)]):
        sizes = dict(zip(syms, vals))
        fixed = {}
        if name.startswith("seed"):
            continue  # has a free index; covered by the fuzz tests
        assert numeric_max_diff(claim.lhs, claim.rhs, sizes, fixed=fixed) < 1e-6


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_never_proved_and_is_refuted(name):
    claim = MUTANTS[name]
    assert not isinstance(prove_equal(claim.lhs, claim.rhs), Theorem)
    cert = certify_equal(name, claim.lhs, claim.rhs, claim.argument)
    assert cert.status == "REFUTED"
    ce = cert.counterexample
    assert abs(ce.expected - ce.got) > 1e-6 * max(abs(ce.expected), abs(ce.got))
    assert ce.argument == claim.argument


def test_statements_print_the_claims():
    dense_dx = PROVED["dense dx"]
    th = prove_equal(dense_dx.lhs, dense_dx.rhs)
    text = th.statement()
    assert "d(" in text and "/dx[" in text          # the transpose-Jacobian side
    assert "dY[" in text and "W[" in text            # the backward side
    tex = th.latex()
    assert r"\vdash" in tex and r"\partial" in tex and r"\sum_" in tex


def test_layer_norm_rests_on_positivity_not_on_conditions():
    """eps > 0 makes var + eps provably positive: no side condition is needed."""
    claim = PROVED["layer norm"]
    th = prove_equal(claim.lhs, claim.rhs)
    assert th.conds == frozenset()
    assert "pow_add_pos" in th.axioms()


def test_relu_is_proved_off_the_kink_with_the_condition_stated():
    from verigrad.frontends import ops
    from verigrad.kernel import RealCond, SizeSym, Var, vjp_statement
    n = SizeSym("n")
    x, dy = Var("x", (n,)), Var("dy", (n,))
    fwd = ops.elementwise(x, ops.relu)
    bwd = ops.lam([n], lambda k: dy[k] * RealCond(x[k], ">"))
    th = prove_equal(bwd, vjp_statement(fwd, x, dy))
    assert isinstance(th, Theorem)
    assert [str(c) for c in th.conds] == ["x[i] != 0 (off the kink) for every i<n"]
    assert "deriv_indicator_off_kink" in th.axioms()
    wrong = ops.lam([n], lambda k: dy[k] * RealCond(x[k], "<"))
    assert not isinstance(prove_equal(wrong, vjp_statement(fwd, x, dy)), Theorem)


@pytest.mark.parametrize("fn,deriv", [
    ("sigmoid", lambda ops, v: ops.sigmoid(v) * (1 - ops.sigmoid(v))),
    ("silu", lambda ops, v: ops.sigmoid(v) * (1 + v * (1 - ops.sigmoid(v)))),
    ("tanh", lambda ops, v: 1 - ops.tanh(v) ** 2),
    ("gelu_erf", lambda ops, v: (1 + ops.erf(v * ops.rsqrt(2))) / 2
     + v * ops.exp(-v * v / 2) * ops.rsqrt(2 * __import__("verigrad.kernel", fromlist=["Const"]).Const("pi"))),
])
def test_elementwise_activations(fn, deriv):
    from verigrad.frontends import ops
    from verigrad.kernel import SizeSym, Var, vjp_statement
    n = SizeSym("n")
    x, dy = Var("x", (n,)), Var("dy", (n,))
    fwd = ops.elementwise(x, getattr(ops, fn))
    good = ops.lam([n], lambda k: dy[k] * deriv(ops, x[k]))
    assert isinstance(prove_equal(good, vjp_statement(fwd, x, dy)), Theorem)
    dropped = ops.lam([n], lambda k: dy[k] * deriv(ops, x[k]) * 2)
    assert not isinstance(prove_equal(dropped, vjp_statement(fwd, x, dy)), Theorem)
