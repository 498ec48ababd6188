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

Fixed: keys spell a name that is not an identifier quoted (``sizes.spell``), so they
cannot collide through names, and conditions are kept by their interned normal form.
"""
import json
import subprocess
import sys
from fractions import Fraction

import pytest

from verigrad.kernel import IndexVar, Pow, SizeSym, Theorem, Var, prove_equal

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


def test_rt4_names_are_spelled_so_keys_cannot_collide():
    a, b, _, _ = _terms()
    assert a.skey != b.skey
    n = SizeSym("n")
    assert IndexVar("i<n", n).skey != IndexVar("i", n).skey and Var("x.s:n>1", ()).skey != Var("x", (n,)).skey
    assert Var("x'", ()).skey == "V:x'"          # plain names are spelled as they are


def test_rt4_colliding_names_keep_both_conditions():
    a, b, lhs, rhs = _terms()
    th = prove_equal(lhs, rhs)
    assert not isinstance(th, Theorem) or any(b in c.term.atoms for c in th.conds), th


def test_rt4_each_base_keeps_its_condition():
    a, b = Var("a", (), ("nonneg",)), Var("b", ())
    h = Fraction(1, 2)
    th = prove_equal(Pow(b, h) * Pow(b, h) + Pow(a, h) * Pow(a, h), a + b)
    assert not isinstance(th, Theorem) or any(b in c.term.atoms for c in th.conds), th


def test_rt4_check_refuses_the_trace(tmp_path):
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(TRACE))
    out = subprocess.run([sys.executable, "-c", "import sys; from verigrad.cli import main; sys.exit(main())",
                          "check", str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and "PROVED" not in out.stdout, out.stdout
