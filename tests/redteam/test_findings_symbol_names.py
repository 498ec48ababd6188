"""Red team rt2-d (fixed): a symbol's name made a proved statement read as a false one.

- RT2-D6, the proof language accepted any string as a symbol's name (``Symbol("W^Q", ...)``
  is how the library names a labelled weight) and shows a symbol by its bare name, so a
  definition named ``"x + x"`` (``z = Symbol("x + x", definition=ZeroMatrix(n))``) made
  the proved ``x + z = x`` read ``x + x + x = x`` in ``verigrad verify --steps`` (proved,
  exit 0; false at x = [1]: 3 against 1). RT-14 quoted such names in the kernel's printer
  (``verigrad check``), not in the proof language's. A name is now an identifier,
  optionally with a superscript label (``W^Q``) and primes (``symbols._NAME``).
- RT2-D7, the LaTeX printer (the HTML proof browser, ``verify --json``'s ``latex``) showed
  an identifier that an underscore ends as the name without it: ``x + x_ = x`` (``x_`` a
  constant defined as 0, proved) was ``[x_j + x_j]_{j<n} = x``, i.e. ``x + x = x``. Such a
  name is one upright word now (``\\mathrm{x\\_}``), and the names LaTeX shows as Greek
  letters read as those letters when names are told apart (``alpha`` beside ``α`` is
  primed; the proof language refuses the two in one statement).
"""
from verigrad.kernel import define, prove_equal
from verigrad.kernel import terms as T

from _verify_files import own_cache, verify

BODY = '''
from verigrad.proof import *


@apply
def apply(x):
    n = x.shape[0]
    z = Symbol({name!r}, definition=ZeroMatrix(n))
    return Equality(x + z, x)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x)
    Eq << Eq[1].this.lhs.args[1].definition
'''


def _verify(tmp_path, name, k=0):
    path = tmp_path / f"named{k}.py"
    path.write_text(BODY.format(name=name))
    return verify(path)


def test_a_name_that_reads_as_an_expression_is_refused(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    for k, name in enumerate(("x + x", "0", "x}+\\mathrm{x", "W^2")):
        rec = _verify(tmp_path, name, k)
        shown = [s.display for s in rec.steps]
        assert not (rec.status == "proved" and "x + x + x = x" in shown), shown
        assert rec.status == "failed" and "a name is an identifier" in rec.reason, (name, rec.status, rec.reason)


def test_names_of_identifiers_and_labels_are_still_proved(tmp_path, monkeypatch):
    """The neighbours: ``z``, a labelled ``z^K`` (as the library's ``W^Q``), a primed ``z'``."""
    own_cache(tmp_path, monkeypatch)
    for k, name in enumerate(("z", "z^K", "z'")):
        rec = _verify(tmp_path, name, k)
        assert rec.status == "proved", (name, rec.status, rec.reason)


def test_latex_shows_a_trailing_underscore(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    rec = _verify(tmp_path, "x_")
    assert rec.status == "proved"
    assert rec.latex != r"\vdash \left[x_{j} + x_{j}\right]_{j < n} = x", rec.latex
    assert r"\mathrm{x\_}" in rec.latex, rec.latex
    x = T.Var("x", ())
    for name in ("x_", "_x"):
        z, _ = define(name, T.Num(0))
        assert prove_equal(x + z, x).latex() == r"\vdash x + \mathrm{" + name.replace("_", r"\_") + "} = x"
    z, _ = define("x_1", T.Num(0))                               # the neighbour: a subscript
    assert prove_equal(x + z, x).latex() == r"\vdash x + x_{1} = x"


def test_a_greek_name_and_its_letter_are_told_apart(tmp_path, monkeypatch):
    a = T.Var("\u03b1", ())
    z, _ = define("alpha", T.Num(0))
    th = prove_equal(a + z, a)
    assert th.latex() != "\\vdash \u03b1 + \\alpha = \u03b1" and "'" in th.latex(), th.latex()
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "greek.py"
    path.write_text(BODY.format(name="alpha").replace("Symbol.x(", "Symbol.\u03b1("))     # the variable named α
    rec = verify(path)
    assert rec.status == "failed" and "read alike" in rec.reason, (rec.status, rec.reason)
