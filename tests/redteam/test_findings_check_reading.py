"""Red team rt2-d (fixed): statements ``verigrad check`` (and the LaTeX of the HTML pages)
showed PROVED so that they read false, though each kernel theorem is true; and a trace
of nothing exited 0.

- RT2-D2, a negative integer expression (``IntVal``, an integer read as a real) had the
  precedence of an atom: ``(-1)^2 = 1`` was printed ``-1^2 = 1`` and ``(-n)^2 = n^2`` as
  ``-n^2 = n^2`` (both false as read: -(1^2) = -1; -n^2 < 0 < n^2), in text and in LaTeX.
  In LaTeX, where factors are juxtaposed, ``x * (-2) = -2 x`` was ``x \\, -2 = -2 \\, x``
  (read: x - 2 = -2x, false at x = 1), and ``(d x / d x) * x = x`` was
  ``\\frac{\\partial}{\\partial x} x \\, x = x`` (read: d(x^2)/dx = x, false at x = 1). A
  negative integer expression now reads as a negative number does (bracketed as a power's
  base); a LaTeX factor after the first that starts with a sign, and a derivative before
  another factor, are bracketed.
- RT2-D3, a bound index was shown by its bare name in its binder (``Lamda[J<n]``, ``Sum[J<n]``)
  while its uses are spelled (``poly_str`` quotes a name that is not an identifier); an
  index's name is any string, so ``Lamda[J<n](1) = Lamda[k<n](1)`` with J named
  ``k<n](1) + Lamda[k`` was printed ``Lamda[k<n](1) + Lamda[k<n](1) = Lamda[k<n](1)``
  PROVED, exit 0 (read: 1 + 1 = 1). The binder and the ``for`` line spell it now.
- RT2-D4 (kernel side), names that read alike were told apart by their code points only: a
  Cyrillic ``х`` beside a Latin ``x`` kept both names, and the LaTeX read
  ``[x_j + х_j]_{j<n} = x`` (``x + x = x``) for the constant ``х := 0``. The printer now
  groups names by how they read (``printing.skeleton``: NFKC, no invisible characters,
  Cyrillic and Greek look-alikes read as Latin), so the second is primed.
- RT2-D5, ``verigrad check`` of a trace with no claim (``certify --proof`` writes one when
  nothing is proved) printed nothing and exited 0; it is refused now.
"""
import json
import subprocess
import sys

from verigrad.kernel import define, prove_equal
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, Poly, SizeSym
from verigrad.report.printing import shown
from verigrad.trace import write_trace


def _check(trace):
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", "--json", str(trace)],
                          capture_output=True, text=True, timeout=600)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _proved(trace):
    code, verdicts = _check(trace)
    assert code == 0 and all(v["status"] == "PROVED" for v in verdicts), verdicts
    return [v["statement"] for v in verdicts]


n = SizeSym("n", 1)


def test_a_negative_integer_expression_is_bracketed_as_a_base(tmp_path):
    one = prove_equal(T.Pow(T.IntVal(Poly.const(-1)), 2), T.Num(1))
    sq = prove_equal(T.Pow(T.IntVal(-Poly.sym(n)), 2), T.Pow(T.IntVal(Poly.sym(n)), 2))
    shown = _proved(write_trace(tmp_path / "neg.trace.json", [("one", one), ("sq", sq)]))
    assert "-1^2 = 1" not in shown and "-n^2 = n^2" not in shown, shown
    assert shown == ["(-1)^2 = 1", "(-n)^2 = n^2"], shown
    assert one.latex() == r"\vdash \left(-1\right)^{2} = 1", one.latex()


def test_a_positive_integer_expression_is_still_an_atom(tmp_path):
    """The neighbour: ``n^2 = n*n`` is shown as it was."""
    sq = prove_equal(T.Pow(T.IntVal(Poly.sym(n)), 2), T.Mul((T.IntVal(Poly.sym(n)), T.IntVal(Poly.sym(n)))))
    assert _proved(write_trace(tmp_path / "pos.trace.json", [("sq", sq)])) == ["n^2 = n*n"]


def test_latex_brackets_a_signed_factor_and_a_derivative_before_a_factor():
    x = T.Var("x", ())
    neg = prove_equal(T.Mul((x, T.Num(-2))), T.Mul((T.Num(-2), x)))
    assert neg.latex() == r"\vdash x \, \left(-2\right) = -2 \, x", neg.latex()
    d = prove_equal(T.Mul((T.Deriv(x, x), x)), x)
    assert d.latex() == r"\vdash \left(\frac{\partial}{\partial x} x\right) \, x = x", d.latex()
    # the neighbours: a sign in front, a derivative last
    assert prove_equal(T.Mul((T.Num(-2), x)), T.Mul((x, T.Num(-2)))).latex().startswith(r"\vdash -2 \, x = ")
    assert prove_equal(T.Mul((x, T.Deriv(x, x))), x).latex() == r"\vdash x \, \frac{\partial}{\partial x} x = x"


def test_a_binder_is_spelled_as_its_uses(tmp_path):
    J, k = IndexVar("k<n](1) + Lamda[k", Poly.sym(n)), IndexVar("k", Poly.sym(n))
    th = prove_equal(T.Lamda((J,), T.Num(1)), T.Lamda((k,), T.Num(1)))
    (shown,) = _proved(write_trace(tmp_path / "binder.trace.json", [("ones", th)]))
    assert shown != "Lamda[k<n](1) + Lamda[k<n](1) = Lamda[k<n](1)", shown
    assert shown == 'Lamda["k<n](1) + Lamda[k"<n](1) = Lamda[k<n](1)', shown


def test_a_free_index_with_an_odd_name_is_spelled_in_the_for_line(tmp_path):
    x = T.Var("x", (Poly.sym(n),))
    i = IndexVar("i < 0 or", Poly.sym(n))
    th = prove_equal(T.Index(x, (Poly.sym(i),)), T.Index(x, (Poly.sym(i),)))
    code, (v,) = _check(write_trace(tmp_path / "free.trace.json", [("free", th)]))
    assert code == 0 and '0 <= "i < 0 or" < n' in v["for"], v["for"]


def test_a_plain_binder_is_shown_as_before(tmp_path):
    """The neighbour: ``Lamda[j<n](x[j]) = x``."""
    x = T.Var("x", (Poly.sym(n),))
    j = IndexVar("j", Poly.sym(n))
    th = prove_equal(T.Lamda((j,), T.Index(x, (Poly.sym(j),))), x)
    assert _proved(write_trace(tmp_path / "plain.trace.json", [("plain", th)])) == ["Lamda[j<n](x[j]) = x"]


def test_look_alike_names_are_primed(tmp_path):
    x = T.Var("x", (Poly.sym(n),))
    for name in ("\u0445", "x\u3164", "x\u200d"):          # Cyrillic ha; x and a Hangul filler; x and a ZWJ
        z, _ = define(name, T.Lamda((IndexVar("j", Poly.sym(n)),), T.Num(0)))
        th = prove_equal(x + z, x)
        assert th.latex() != r"\vdash \left[x_{j} + " + name + r"_{j}\right]_{j < n} = x", th.latex()
        assert "'" in th.latex(), (name, th.latex())          # the constant is primed: x + x' = x
        code, (v,) = _check(write_trace(tmp_path / "alike.trace.json", [("alike", th)]))
        # (primed, and a character that does not print escaped: ``"x\u{200d}'"``, RT20-F2)
        assert code == 0 and shown(name + "'") in v["statement"], v


def test_greek_names_are_not_look_alikes():
    """The neighbour: alpha and a, and a name apart from x, keep their names."""
    a, alpha = T.Var("a", ()), T.Var("\u03b1", ())
    th = prove_equal(a + alpha - alpha, a)
    assert "'" not in th.latex() and "\u03b1" in th.latex(), th.latex()


def test_a_trace_of_no_claim_is_refused(tmp_path):
    th = prove_equal(T.Num(1), T.Num(1))
    path = write_trace(tmp_path / "none.trace.json", [])
    code, verdicts = _check(path)
    assert code == 1 and [v["status"] for v in verdicts] == ["REFUSED"], verdicts
    assert _proved(write_trace(tmp_path / "one.trace.json", [("one", th)])) == ["1 = 1"]
