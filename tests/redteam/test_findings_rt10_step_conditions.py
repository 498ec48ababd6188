"""Red team RT10-B1 (open): a proved step is printed without its side conditions: beside
"proved", an equation that is false as printed, for an honest file, on a fresh run.

A step's text is printed from its replayed theorem (``library._step_text``): with its
hypotheses when it rests on any (RT9-A1), else as the bare equation ``lhs = rhs``, and a
step record has no field for conditions. So a step whose theorem holds only under a side
condition reads as if it held everywhere. ``cond.py`` states ``x*y/y = x``; the kernel
proves it under ``y != 0`` (the record's statement says so)::

    $ verigrad verify --no-cache --steps cond.py            # exit 0
    cond  proved  cond.py
             Eq[0]  proved   x*y/y = x
             Eq[1]  proved   (the statement of Eq[0], unchanged)
     cond     proved      2       3  0.012  |- x*y/y = x   [under y != 0]

``verify --json`` gives the same steps (``"statement": "x*y/y = x"``, ``"latex": "\\frac{x
\\, y}{y} = x"``), and so does the HTML proof page (a step's LaTeX only). At ``y = 0`` the
step as printed is false. (With a planted cache entry, RT10-A2, the goal step reads
``Eq[0] proved x + x = x``.)
"""
from _verify_files import verify

COND = '''
from verigrad.proof import *


@apply
def apply(x, y):
    return Equality(x * y / y, x)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    y = Symbol.y(real=True)
    Eq << apply(x, y)
    Eq << Eq[-1].this.lhs.simplify()
'''


def test_a_proved_step_reads_with_its_side_conditions(tmp_path):
    path = tmp_path / "cond.py"
    path.write_text(COND)
    rec = verify(path)
    assert rec.status == "proved" and rec.conditions == ["y != 0"], (rec.status, rec.conditions)
    for st in (s.to_json() for s in rec.steps if s.status == "proved"):
        assert "y != 0" in st["statement"], st["statement"]
