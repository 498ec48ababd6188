"""Reshapes: merged and split dimensions (floor division, mixed-radix deltas)."""
import pytest

from verigrad.certify.vjp import certify_equal
from verigrad.kernel import IndexVar, Lamda, SizeSym, Sum, Theorem, Var, prove_equal, vjp_statement

n, h, e = SizeSym("n"), SizeSym("h"), SizeSym("e")
i, c = IndexVar("i", n), IndexVar("c", h * e)
a, b, q = IndexVar("a", h), IndexVar("b", e), IndexVar("q", e)
X, Z = Var("X", (n, h * e)), Var("Z", (n, h, e))
dX, dZ = Var("dX", (n, h * e)), Var("dZ", (n, h, e))

SPLIT = Lamda([i, a, b], X[i, a * e + b])           # (n, h*e) -> (n, h, e): heads as column slabs
MERGE = Lamda([i, c], Z[i, c // e, c % e])          # (n, h, e) -> (n, h*e): concatenate the heads


def test_the_vjp_of_a_split_is_a_merge_and_back():
    assert isinstance(prove_equal(Lamda([i, c], dZ[i, c // e, c % e]), vjp_statement(SPLIT, X, dZ)), Theorem)
    assert isinstance(prove_equal(Lamda([i, a, b], dX[i, a * e + b]), vjp_statement(MERGE, Z, dX)), Theorem)


def test_a_contraction_over_merged_heads():
    """The out projection of multi-head attention reads the concatenated heads."""
    W, dY = Var("W", (h * e, e)), Var("dY", (n, e))
    Y = Lamda([i, q], Sum(c, Z[i, c // e, c % e] * W[c, q]))
    dZ_ = Lamda([i, a, b], Sum(q, dY[i, q] * W[a * e + b, q]))
    dW_ = Lamda([c, q], Sum(i, Z[i, c // e, c % e] * dY[i, q]))
    th = prove_equal(dZ_, vjp_statement(Y, Z, dY))
    assert isinstance(th, Theorem) and "sum_reindex" in th.axioms()
    assert isinstance(prove_equal(dW_, vjp_statement(Y, W, dY)), Theorem)


@pytest.mark.parametrize("wrong", [
    Lamda([i, c], dZ[i, c // e, (c + 1) % e]),      # off by one inside the head
    Lamda([i, c], dZ[i, (c + e) // e % h, c % e]),  # the wrong head
])
def test_wrong_reindexing_is_refuted(wrong):
    cert = certify_equal("split dX (wrong)", wrong, vjp_statement(SPLIT, X, dZ))
    assert cert.status == "REFUTED"
