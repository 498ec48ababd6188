"""Red team (RT-33, helper R1; fixed): total indexing was shown exactly as strict
indexing, so ``verigrad verify`` and ``verigrad check`` report ``x[-1] = 0`` PROVED for a
real vector x (exit 0): false under Python's, NumPy's and JAX's reading of ``x[-1]``
(the last entry), and a statement the proof language itself refuses to compile when
``x[-1]`` is written plainly ("index -1 is not provably inside [0, n) in x").

Reproduction::

    $ cat last.py
    from verigrad.proof import *

    @apply
    def apply(x):
        return Equality(Indexed(x, -1, total=True), 0)

    @prove
    def prove(Eq):
        n = Symbol.n(domain=[2, oo], integer=True)
        x = Symbol.x(shape=(n,), real=True)
        Eq << apply(x)

    $ verigrad verify --no-cache --steps --proofs out last.py     # exit 0
    last  proved
             Eq[0]  proved   x[-1] = 0
    axioms used: entry_off_shape, ring
    $ verigrad check out/last.trace.json                          # exit 0
    out/last.trace.json: PROVED last
        x[-1] = 0
        axioms: entry_off_shape, ring

The kernel's theorem is true: ``Index(x, (-1,), total=True)`` reads 0 outside the shape
(padding, shifts). But ``Indexed`` (exported by ``from verigrad.proof import *``) takes
``total=True`` and its text, ``Indexed._text``, drops it; the kernel printer
(``verigrad/report/printing.py``, ``_text`` and ``_latex`` for ``T.Index``) prints
``t.idx`` and never ``t.total``. So the statement shown is the strict ``x[-1]``, and the
same goes for ``x[n] = 0`` or ``Sum[i:n](x[i + 1]) = Sum[i:n](x[i]) - x[0]`` (each true
only with a zero read past the end). ``check``'s promise is that the statement printed is
the one the kernel proved; here a reader cannot tell it from the false one.

Fix direction: show a total read distinctly wherever it is printed (the proof language's
text, the kernel printer and its LaTeX: e.g. ``x{-1}``, ``x[-1]?0`` or a ``pad(x)``
notation), or refuse an out-of-range total index in the proof language's ``Indexed``.

Fixed: a total read whose indices the kernel cannot show inside the shape (its own check
of a strict read) is shown ``x[-1]?0`` ("entry -1, or 0") by the kernel printer, its
LaTeX (``x_{-1}^{?0}``) and the proof language's text; one shown inside (where the two
readings agree) still prints as ``x[i + 1]``.
"""
import json
import subprocess
import sys

import numpy as np
import pytest

from _verify_files import own_cache, verify

BODY = '''
from verigrad.proof import *


@apply
def apply(x):
    return Equality(Indexed(x, -1, total=True), 0)


@prove
def prove(Eq):
    n = Symbol.n(domain=[2, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x)
'''

STRICT = BODY.replace("Indexed(x, -1, total=True)", "x[-1]")

SHOWN = "x[-1] = 0"


def test_the_statement_as_shown_is_false():
    x = np.array([0.0, 1.0])
    assert x[-1] != 0


def test_the_strict_reading_is_refused(tmp_path, monkeypatch):
    """The control: ``x[-1]`` written plainly does not compile, so nothing is proved."""
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "last_strict.py"
    path.write_text(STRICT)
    assert verify(path).status != "proved"


def test_verify_does_not_show_x_minus_1_is_0_proved(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "last.py"
    path.write_text(BODY)
    rec = verify(path)
    shown = {rec.display, rec.statement} | {s.display for s in rec.steps} | {s.statement for s in rec.steps}
    assert not (rec.status == "proved" and SHOWN in shown), f"{SHOWN} reported proved ({shown})"
    assert rec.status == "proved" and "x[-1]?0 = 0" in shown, (rec.status, shown)


def test_check_does_not_print_x_minus_1_is_0_proved(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "last.py"
    path.write_text(BODY)
    rec = verify(path)
    assert rec.status == "proved" and rec.trace is not None
    trace = tmp_path / "last.trace.json"
    trace.write_text(json.dumps(rec.trace))
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", "--json", str(trace)],
                          capture_output=True, text=True, timeout=600)
    verdicts = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    shown = [v.get("statement") for v in verdicts if v["status"] == "PROVED"]
    assert SHOWN not in shown, f"check: PROVED {shown}"
    assert shown == ["x[-1]?0 = 0"], shown


def test_a_total_read_shown_inside_prints_as_a_strict_read():
    """Where the kernel shows every index inside the shape, both readings agree and the read
    prints plainly; off it (``x[n]``, ``x[i - 1]`` at i = 0) it carries the mark, in text
    and LaTeX."""
    from verigrad.kernel import terms as T
    from verigrad.kernel.sizes import IndexVar, Poly, SizeSym
    from verigrad.report.printing import latex, text
    n = SizeSym("n", 2)
    x = T.Var("x", (Poly.sym(n),))
    i = IndexVar("i", Poly.sym(n) - 1)
    inside = T.Index(x, (Poly.sym(i) + 1,), total=True)
    assert text(inside) == "x[i + 1]" and "?0" not in latex(inside)
    for idx in (Poly.sym(n), Poly.sym(i) - 1):
        t = T.Index(x, (idx,), total=True)
        assert text(t).endswith("]?0") and latex(t).endswith("^{?0}"), (text(t), latex(t))
    assert text(T.Pow(T.Index(x, (Poly.sym(n),), total=True), 2)) == "(x[n]?0)^2"
