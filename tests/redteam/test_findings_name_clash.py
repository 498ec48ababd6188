"""Red team (RT-34, helper R1; fixed): a defined constant could share its name with a
variable of the same statement, and both were printed by that bare name, so
``verigrad verify`` shows ``x + x = x`` proved and ``verigrad check`` prints
``Lamda[j<n](x[j] + x[j]) = x`` PROVED (exit 0) for a real vector x: false at x = [1].

Reproduction::

    $ cat clash.py
    from verigrad.proof import *

    @apply
    def apply(x):
        n = x.shape[0]
        z = Symbol.x(definition=ZeroMatrix(n))      # a definition named x
        return Equality(x + z, x)

    @prove
    def prove(Eq):
        n = Symbol.n(domain=[1, oo], integer=True)
        x = Symbol.x(shape=(n,), real=True)
        Eq << apply(x)
        Eq << Eq[1].this.lhs.args[1].definition

    $ verigrad verify --no-cache --steps --proofs out clash.py      # exit 0
    clash  proved
             Eq[0]  proved   x = ZeroMatrix(n)        (definition)
             Eq[1]  proved   x + x = x                (the goal)
    $ verigrad check out/clash.trace.json                           # exit 0
    out/clash.trace.json: PROVED clash
        Lamda[j<n](x[j] + x[j]) = x
        axioms: congruence, conversion, definition, ring

The kernel's theorem is true: ``Var x + Named(x, 0) = Var x``. RT-14 quoted names that
are not identifiers, so ``"0" = 1`` no longer reads ``0 = 1``; but two different objects
with the same identifier name still print alike: the printer
(``verigrad/report/printing.py``, ``_text``: ``T.Named`` and ``T.Var`` shown as
``shown(t.name)``) tells apart two indices of one name (``i``, ``i'``), never a constant
and a variable (nor two variables of one name with other shapes or facts), and
``TensorSymbol``'s text in the proof language is the bare name too. The proof language
lets a definition take a variable's name (``Symbol.x(definition=...)`` next to
``Symbol.x(shape=...)``), and the kernel (``define``) accepts any name.

Fix direction: the printers give distinct objects of one name distinct spellings (as
they do indices), or show a defined constant with its definition (RT-14's remaining
direction); or the proof language refuses a definition named like another symbol of
the statement.

Fixed, both ways. The proof language refuses two different tensor symbols of one name
in one statement (``statements.one_symbol_per_name``: its text shows symbols by bare
name). The kernel printer, which ``verigrad check`` uses on any trace (a trace need not
come from the proof language), names every distinct object once per display
(``printing._display_names``: variables, defined constants, sizes, indices; the others
primed, ``x + x' = x``), shows a claim's sides, hypotheses and conditions in one display,
and says what its free names stand for, a defined constant's definition among them
(``for n >= 1; x: real (n,); x' := ...``).
"""

import json
import subprocess
from fractions import Fraction
import sys

import numpy as np

from _verify_files import own_cache, verify
from verigrad.kernel import define, prove_equal
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, Poly, SizeSym
from verigrad.trace import write_trace

BODY = '''
from verigrad.proof import *


@apply
def apply(x):
    n = x.shape[0]
    z = Symbol.x(definition=ZeroMatrix(n))
    return Equality(x + z, x)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x)
    Eq << Eq[1].this.lhs.args[1].definition
'''

FALSE = {"x + x = x", "Lamda[j<n](x[j] + x[j]) = x"}


def test_the_statement_as_shown_is_false():
    x = np.array([1.0])
    assert not np.array_equal(x + x, x)


def test_verify_refuses_two_symbols_of_one_name(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "clash.py"
    path.write_text(BODY)
    rec = verify(path)
    shown = {rec.display} | {s.display for s in rec.steps if s.kind == "goal"}
    assert not (rec.status == "proved" and FALSE & shown), f"reported proved: {shown}"
    assert rec.status == "failed" and "two different symbols are named x" in rec.reason, (rec.status, rec.reason)


def test_verify_still_proves_the_same_statement_with_two_names(tmp_path, monkeypatch):
    """The neighbour: the definition named z, ``x + z = x`` is proved."""
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "no_clash.py"
    path.write_text(BODY.replace("Symbol.x(definition", "Symbol.z(definition"))
    rec = verify(path)
    assert rec.status == "proved", (rec.status, rec.reason)


def _check(trace):
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", "--json", str(trace)],
                          capture_output=True, text=True, timeout=600)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_check_shows_a_constant_named_like_a_variable_apart(tmp_path):
    """A kernel theorem ``Var x + Named(x, 0) = Var x`` (a trace needs no proof language):
    check shows the constant primed and defined, never ``x + x = x``."""
    n = SizeSym("n", 1)
    x = T.Var("x", (Poly.sym(n),))
    z, _ = define("x", T.Lamda((IndexVar("j", Poly.sym(n)),), T.Num(0)))
    th = prove_equal(x + z, x)
    trace = write_trace(tmp_path / "clash.trace.json", [("clash", th)])
    (v,) = [v for v in _check(trace) if v["status"] == "PROVED"]
    assert v["statement"] not in FALSE
    assert v["statement"] == "x + x' = x", v
    assert "x: real (n,)" in v["for"] and any(f.startswith("x' := ") for f in v["for"]), v["for"]


def test_check_shows_one_display_for_both_sides(tmp_path):
    """Two indices named i: shown side by side, each side in a display of its own named the
    rhs's i as the lhs's: ``x[i]*0 + y[i'] = y[i]`` for a true ``... = y[i']``."""
    n, m = SizeSym("n", 1), SizeSym("m", 1)
    i1, i2 = IndexVar("i", Poly.sym(n)), IndexVar("i", Poly.sym(m))
    x, y = T.Var("x", (Poly.sym(n),)), T.Var("y", (Poly.sym(m),))
    lhs = T.Add((T.Mul((T.Num(0), T.Index(x, (Poly.sym(i1),)))), T.Index(y, (Poly.sym(i2),))))
    th = prove_equal(lhs, T.Index(y, (Poly.sym(i2),)))
    trace = write_trace(tmp_path / "two_i.trace.json", [("two_i", th)])
    (v,) = [v for v in _check(trace) if v["status"] == "PROVED"]
    (over_m,) = [f.split()[2] for f in v["for"] if f.startswith("0 <= ") and f.endswith("< m")]
    (over_n,) = [f.split()[2] for f in v["for"] if f.startswith("0 <= ") and f.endswith("< n")]
    assert {over_m, over_n} == {"i", "i'"}, v["for"]
    assert v["statement"] == f"0*x[{over_n}] + y[{over_m}] = y[{over_m}]", v


def test_check_says_what_a_variable_is(tmp_path):
    """``sqrt(x^2) = x`` holds for a positive x only: check says so."""
    x = T.Var("x", (), ("positive",))
    th = prove_equal(T.Pow(T.Pow(x, 2), Fraction(1, 2)), x)
    trace = write_trace(tmp_path / "pos.trace.json", [("pos", th)])
    (v,) = [v for v in _check(trace) if v["status"] == "PROVED"]
    assert v["statement"] == "sqrt(x^2) = x" and v["for"] == ["x: real, positive"], v


def test_verify_refuses_a_real_named_like_a_size(tmp_path, monkeypatch):
    """``n/n + n = 1 + n`` for a size n and a real n reads as one real n (false at n = 0)."""
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "n_clash.py"
    path.write_text(BODY.replace("def apply(x):", "def apply(x, n):")
                    .replace("    n = x.shape[0]\n    z = Symbol.x(definition=ZeroMatrix(n))\n"
                             "    return Equality(x + z, x)", "    return Equality(n / n + x, 1 + x)")
                    .replace("    x = Symbol.x(shape=(n,), real=True)\n    Eq << apply(x)\n"
                             "    Eq << Eq[1].this.lhs.args[1].definition\n", "    x = Symbol.n(real=True)\n"
                             "    Eq << apply(x, n)\n"))
    rec = verify(path)
    assert rec.status == "failed" and "two different symbols are named n" in rec.reason, (rec.status, rec.reason)
