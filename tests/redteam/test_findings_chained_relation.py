"""Red team RT-26 (fixed: a relation has no Python truth value): a chained comparison in a
theorem file dropped its first half, so ``verigrad verify`` reported a false file proved.

Python evaluates ``0 < x < 1`` as ``(0 < x) and (x < 1)``: it asks the truth of the
relation ``0 < x``, an object (true, as every object without ``__bool__`` is), and the
chain becomes ``x < 1``. So ``Piecewise((1, 0 < x < 1), (0, True)) =
Piecewise((1, x < 1), (0, True))`` was proved, false at x = -1 (0 against 1). SymPy
refuses the same chain; the proof language now does too, naming the relation, and the
conjunction is written as a product of indicators."""
from _verify_files import own_cache, verify_statement


def test_a_chained_comparison_is_refused(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    rec = verify_statement(tmp_path / "chain.py", "Piecewise((1, 0 < x < 1), (0, True))",
                           "Piecewise((1, x < 1), (0, True))", "real")
    assert rec.status != "proved"
    assert "no Python truth value" in rec.reason and "chained comparison" in rec.reason


def test_the_claim_was_false():
    x = -1.0
    assert (1 if 0 < x < 1 else 0) != (1 if x < 1 else 0)


def test_the_conjunction_as_a_product_of_indicators_proves(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    rec = verify_statement(tmp_path / "both.py", "Bool(0 < x) * Bool(x < 1)", "Bool(x < 1) * Bool(x > 0)", "real")
    assert rec.status == "proved", rec.reason
