"""Red-team finding RT-4 (false kernel theorem, accepted by ``verigrad check``): side
conditions are deduplicated by the *key string* of their term
(``Normalizer.need``: ``self.conds[(kind, u.skey)]``), and key strings are not
injective: a variable's name is any non-empty string, so ``Var("a!nonneg")`` (no
facts) and ``Var("a", facts=("nonneg",))`` both have the key ``V:a!nonneg``. Their
two conditions ``a!nonneg > 0`` and ``a > 0`` share one dict slot; the last written
wins, and the theorem keeps only ``a > 0`` (true almost everywhere for the nonneg
``a``) while ``sqrt(b)^2 = b`` needed ``b > 0``. At a = 1, b = -4 the condition holds and
the sides differ. A trace of the same step (built by the public constructors, as
``replay`` does) is PROVED by ``verigrad check``.
"""
import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from verigrad.kernel import Pow, Theorem, Var, prove_equal

TRACE = {"format": "verigrad-proof-trace", "version": 1,
         "objects": [["Var", "a", ["t"], ["t", "nonneg"]], ["Var", "a!nonneg", ["t"], ["t"]],
                     ["Num", ["q", 1, 2]], ["Pow", 1, ["q", 1, 2]], ["Pow", 0, ["q", 1, 2]],
                     ["Mul", ["t", 3, 3]], ["Mul", ["t", 4, 4]], ["Add", ["t", 5, 6]], ["Add", ["t", 0, 1]]],
         "steps": [{"rule": "decide", "args": [7, 8], "lhs": 7, "rhs": 8, "conds": [["positive", 0]]}],
         "claims": [{"name": "rt4", "step": 0}]}


def _terms():
    a, b = Var("a", (), ("nonneg",)), Var("a!nonneg", ())
    h = Fraction(1, 2)
    return a, b, Pow(b, h) * Pow(b, h) + Pow(a, h) * Pow(a, h), a + b


def test_rt4_the_claim_is_false_where_its_condition_holds():
    from verigrad.certify.evaluate import evaluate
    a, b, lhs, rhs = _terms()
    vals = {a: np.array(1.0), b: np.array(-4.0)}
    assert abs(float(evaluate(lhs, {}, vals)) - float(evaluate(rhs, {}, vals))) > 1


@pytest.mark.xfail(strict=True, reason="RT-4: conditions deduplicated by key string; Var names collide in keys")
def test_rt4_colliding_keys_keep_both_conditions():
    a, b, lhs, rhs = _terms()
    th = prove_equal(lhs, rhs)
    assert not isinstance(th, Theorem) or any(c.term is b for c in th.conds), th


@pytest.mark.xfail(strict=True, reason="RT-4: verigrad check replays the false step")
def test_rt4_check_refuses_the_trace(tmp_path):
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(TRACE))
    out = subprocess.run([sys.executable, "-c", "import sys; from verigrad.cli import main; sys.exit(main())", "check", str(path)], capture_output=True, text=True,
                         timeout=300)
    assert "PROVED" not in out.stdout, out.stdout
