"""Red team RT-21 (fixed: conditions are searched for complex symbols too): a complex symbol that occurs only in a ``Piecewise`` condition escapes the
complex-ring check, so a false statement over C is reported proved (``--no-cache``, exit 0).

``Symbol.z(complex=True)`` is accepted only in a proof that uses ring laws alone
(``verigrad/proof/complex_symbols.py``). ``script._conclude`` runs that check only when
``has_complex(log)`` finds a complex symbol, and ``mentions_complex`` looks for one with
``Expr.walk()``, which goes through ``.args`` only. A ``Piecewise`` keeps its conditions
in ``self.conds``, not in ``.args`` (``verigrad/proof/expressions/indicators.py``), so
``Piecewise((1, z*z < 0), (0, True))`` has no complex symbol as far as the check can
see. The check is skipped, and the kernel (whose ``Var("z", ())`` is the same for a real
and a complex z) proves the real statement.

Reproduction::

    $ cat cpw.py
    from verigrad.proof import *

    @apply
    def apply(z):
        return Equality(Piecewise((1, z*z < 0), (0, True)), 0)

    @prove
    def prove(Eq):
        z = Symbol.z(complex=True)
        Eq << apply(z)
    $ verigrad verify --no-cache --steps cpw.py       # exit 0
    cpw  proved
             Eq[0]  proved   Piecewise((1, z*z < 0), (0, True)) = 0
    axioms used: indicator_nonneg, pow_add_int, ring

False at z = i: z*z = -1, which is a real number and < 0, so the Piecewise is 1, not 0.
The same with ``Piecewise((1, z*z >= 0), (0, True)) = 1``. The check works where the
symbol is visible: ``Bool(z*z >= 0) = 1`` (the relation's sides are ``.args``) and
``Piecewise((z, z*z >= 0), (0, True)) = z`` (z also in a value) are refused ("a proof
over C must use only ring operations": ``indicator_nonneg``, ``RealCond``).

Root: ``complex_symbols.mentions_complex`` walks ``.args`` only; ``Piecewise.conds`` (its
relations' ``lhs`` / ``rhs``) are not args, so a symbol used only there is never seen.
"""
import pytest

from _verify_files import own_cache, verify_statement

CASES = {
    "negative_square": ("Piecewise((1, z*z < 0), (0, True))", "0"),       # false at z = i (1 != 0)
    "nonneg_square": ("Piecewise((1, z*z >= 0), (0, True))", "1"),        # false at z = i (0 != 1)
}


def test_the_statements_are_false_at_i():
    z = 1j
    assert (z * z).imag == 0 and (z * z).real == -1.0
    assert (1 if (z * z).real < 0 else 0) != 0           # negative_square: lhs 1, rhs 0
    assert (1 if (z * z).real >= 0 else 0) != 1          # nonneg_square: lhs 0, rhs 1


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_complex_symbol_in_a_piecewise_condition_is_not_proved(case, tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    lhs, rhs = CASES[case]
    rec = verify_statement(tmp_path / f"cpw_{case}.py", lhs, rhs, "complex", "z")
    assert rec.status != "proved", f"{lhs} = {rhs} for complex z reported proved"


def test_the_real_twin_is_proved_and_the_visible_cases_are_refused(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    lhs, rhs = CASES["negative_square"]
    assert verify_statement(tmp_path / "cpw_real.py", lhs, rhs, "real", "z").status == "proved"   # true over R
    for name, (l, r) in {"bool": ("Bool(z*z >= 0)", "1"),
                         "in_value": ("Piecewise((z, z*z >= 0), (0, True))", "z")}.items():
        assert verify_statement(tmp_path / f"cpw_{name}.py", l, r, "complex", "z").status != "proved", name
