"""Red team RT3-C1 (helper rt3-c; fixed: a renaming that makes two atoms one combines
them): a binder order chosen by the untrusted hook, or read from a forged trace, made the
kernel prove a false theorem.

Attacked: the claim of ``normal.Choices`` that any binder order is sound. ``rename_atom``
normalizes a sum over several binders again after renaming its free indices (its best
binder order may change), and that second normalization asks for a binder order afresh.
Two alpha-equivalent sums built with different orders are two atoms; renamed, they can
become one. ``rename_nf`` and ``rename_mono`` rebuilt their maps with dict comprehensions,
so the second monomial's coefficient (the second factor's exponent) overwrote the first's.

    A(t) = Sum[i<m] Sum[j<p] w[t, i, j],   B(t) = Sum[j<p] Sum[i<m] w[t, i, j]   (A = B)

    |- Sum[t<n](y[t] g(B(t) - A(t))) = Sum[t<n](y[t] g(A(t)))      (g opaque)

was proved with no condition (axioms fubini, ring): A and B built as nested (two atoms),
then, when the outer sum renamed ``t`` to its canonical binder, both normalized again in
one order: ``B - A`` became ``A``. False: the left side is ``g(0) sum y``; at n = m = p = 1,
w = 0.0139, y = 1 with g the identity it is 0 against 0.0139. The recorded choices replay
it in a process with no hooks (``verigrad check`` replays traces from files, which anyone
can write). ``_canon_sum`` added the exponents of such a pair without ``combine``, so
``A / B`` became 1 with no ``A != 0`` condition.

Fixed (``verigrad/kernel/normal.py``): ``rename_nf`` adds the coefficients of monomials
that a renaming makes one, and ``rename_mono`` and ``_canon_sum`` combine repeated atoms
with ``combine`` (``_gather``), recording its condition.
"""
import pytest

from verigrad.certify import witness as W
from verigrad.kernel import (IndexVar, KernelError, Num, ScalarFn, SizeSym, Sum, Theorem, Var, prove_equal)
from verigrad.kernel import normal as N

n, m, p = SizeSym("n"), SizeSym("m"), SizeSym("p")
t, i, j = IndexVar("t", n), IndexVar("i", m), IndexVar("j", p)
w, y = Var("w", (n, m, p)), Var("y", (n,))
g = ScalarFn("g")
A = Sum(i, Sum(j, w[t, i, j]))
B = Sum(j, Sum(i, w[t, i, j]))
M = i.size


def _as_built(bs, factors):
    """An untrusted order: as the sums were nested when first built (a free temporary), the
    range-m binder first once the outer sum has named its binder canonically."""
    if any("ib:" in a.skey for a, _ in factors):
        return sorted(bs, key=lambda b: 0 if b.size is M else 1)
    return list(bs)


@pytest.fixture
def forged(monkeypatch):
    monkeypatch.setattr(N, "binder_order", _as_built)
    monkeypatch.setattr(N, "nest_order", None)


def _decide(lhs, rhs, **kw):
    """The decision, with the suite's witness check paused: the assertions say what is refused."""
    with W.paused():
        try:
            return prove_equal(lhs, rhs, **kw)
        except KernelError as e:
            return e


def test_the_statement_is_false():
    # g the identity, n = m = p = 1: the left side is y*0, the right y*w
    wv, yv = 0.0139, 1.0
    assert yv * (wv - wv) == 0 and yv * wv != 0


def test_a_forged_binder_order_proves_no_falsehood(forged):
    res = _decide(Sum(t, y[t] * g(B - A)), Sum(t, y[t] * g(A)))
    assert not isinstance(res, Theorem), res.conds
    res = _decide(Sum(t, y[t] * g(A - B)), Sum(t, y[t] * g(-A)))
    assert not isinstance(res, Theorem), res.conds


def test_the_recorded_choices_replay_no_falsehood(forged, monkeypatch):
    """What a trace would record: the choices the hook made, replayed with no hooks."""
    lhs, rhs = Sum(t, y[t] * g(B - A)), Sum(t, y[t] * g(A))
    res = _decide(lhs, rhs)
    if isinstance(res, Theorem):       # (the hole: replay the recorded choices)
        monkeypatch.setattr(N, "binder_order", None)
        res = _decide(lhs, rhs, choices=res.args[2], plan=res.args[3])
    assert not isinstance(res, Theorem)


def test_true_neighbours_still_prove(forged):
    # the renamed pair is combined: B - A = 0, and A / B = 1 where A != 0 (recorded)
    th = prove_equal(Sum(t, y[t] * g(B - A)), g(Num(0)) * Sum(t, y[t]))
    assert isinstance(th, Theorem) and not th.conds
    th = prove_equal(Sum(t, y[t] * g(A / B)), g(Num(1)) * Sum(t, y[t]))
    assert isinstance(th, Theorem) and [c.kind for c in th.conds] == ["nonzero"]
    assert W.Witness(deadline_s=30.0).check(th)[0] != "failed"


def test_the_default_hooks_still_prove_the_identity():
    th = prove_equal(Sum(t, y[t] * g(B - A)), g(Num(0)) * Sum(t, y[t]))
    assert isinstance(th, Theorem) and not th.conds


@pytest.mark.parametrize("pick", [[0.0, 1.0], [True, False], [1, 0.0]])
def test_a_choice_not_of_ints_is_refused_as_such(pick):
    """A replayed binder order of floats or booleans indexes like ints in Python; the
    kernel refuses it as a malformed choice (it was a TypeError; helper-19)."""
    from verigrad.kernel import KernelError, Sum, Var, prove_equal
    from verigrad.kernel.sizes import IndexVar, Poly, SizeSym
    m, p = SizeSym("m"), SizeSym("p")
    i, j = IndexVar("i", Poly.sym(m)), IndexVar("j", Poly.sym(p))
    x = Var("x", (Poly.sym(m), Poly.sym(p)))
    lhs, rhs = Sum(i, Sum(j, x[i, j])), Sum(j, Sum(i, x[i, j]))
    th = prove_equal(lhs, rhs)
    made = th.args[2]                                  # the choices the decision made
    assert prove_equal(lhs, rhs, choices=made).lhs is lhs
    assert any(isinstance(c, list) and len(c) == 2 for c in made)
    forged = [pick if isinstance(c, list) and len(c) == 2 else c for c in made]
    with pytest.raises(KernelError, match="not a permutation"):
        prove_equal(lhs, rhs, choices=forged)
