"""The tie's domain check (``render.domains``): a partial operation of the text is
trusted only where the structure of its argument shows it inside its domain for every
input meeting the step's preconditions; what is not shown leaves its results UNKNOWN."""
from fractions import Fraction

import numpy as np

from verigrad.kernel import terms as T
from verigrad.render.domains import NONNEG, POS, Signs, outside_domain
from verigrad.render.programs import Program, Value

y = T.Var("y", (3,))
v = T.Var("opt/v/w", (3,))          # a second moment: nonnegative by precondition
bc = T.Var("bc2", ())
PRE = {"opt/v/w": NONNEG, "bc2": POS}


def program(**defs):
    """A program over ``y, v, bc`` whose values are ``defs`` in order (each a function of
    the earlier values' variables)."""
    values, env = [], {}
    for name, make in defs.items():
        t = make(env)
        var = T.Var(name, t.shape)
        values.append(Value(var, t, f"f.mlir:{len(values) + 1}"))
        env[name] = var
    return Program((y, v, bc), values, [values[-1].var])


def sign(make, pre=PRE):
    p = program(out=make)
    return Signs(p, pre).of(p.values[-1].definition)


def test_what_the_structure_shows():
    i = T.IndexVar("i", 3)
    assert sign(lambda e: T.Sum(i, T.Func("exp", (T.Index(y, (i,)),)))) == POS          # a softmax's sum
    assert sign(lambda e: T.Add((T.Pow(T.Mul((v, T.Pow(bc, Fraction(-1)))), Fraction(1, 2)), T.Num(Fraction(1, 10**8))))) == POS
    assert sign(lambda e: T.Mul((y, y))) == NONNEG                                       # a square
    assert sign(lambda e: T.Mul((y, T.RealCond(y, ">")))) == NONNEG                      # relu
    norm = T.Pow(T.Sum(i, T.Pow(T.Index(y, (i,)), 2)), Fraction(1, 2))
    u = T.Add((norm, T.Num(-1)))
    clip = T.Add((T.Mul((norm, T.RealCond(u, ">"))), T.RealCond(u, "<=")))              # max(norm, 1)
    assert sign(lambda e: clip) == POS


def test_what_it_does_not_show():
    i = T.IndexVar("i", 3)
    assert sign(lambda e: T.Add((T.Index(y, (0,)), T.Num(Fraction(-1, 100))))) is None   # y[0] - 0.01
    assert sign(lambda e: T.Mul((y, v))) is None
    assert sign(lambda e: v, {}) is None                                                 # no precondition
    relu = T.Mul((y, T.RealCond(y, ">")))
    assert sign(lambda e: relu) != POS                                                   # max(y, 0) may be 0
    # max(norm, 0): the second branch 0 is not positive
    norm = T.Pow(T.Sum(i, T.Pow(T.Index(y, (i,)), 2)), Fraction(1, 2))
    assert sign(lambda e: T.Add((T.Mul((norm, T.RealCond(norm, ">"))), T.Mul((T.Num(0), T.RealCond(norm, "<=")))))) != POS


def test_a_division_not_shown_positive_taints_what_it_reaches():
    p = program(d=lambda e: T.Add((y, T.Num(Fraction(-1, 100)))),
                q=lambda e: T.Mul((T.Num(0), T.Pow(e["d"], Fraction(-1)))),
                out=lambda e: T.Add((y, e["q"])))
    out = outside_domain(p, {y: np.ones(3), v: np.ones(3), bc: np.ones(())}, PRE)
    assert out.reaches(p.results[0]) and "a division (f.mlir:2) of a value not shown positive" in out.reason
    ok = program(d=lambda e: T.Add((v, T.Num(Fraction(1, 10**8)))), out=lambda e: T.Pow(e["d"], Fraction(-1)))
    assert not outside_domain(ok, {y: np.ones(3), v: np.ones(3), bc: np.ones(())}, PRE).reaches(ok.results[0])
    zero = program(out=lambda e: T.Pow(T.Num(0), Fraction(-1)))          # a constant: by its value
    assert "a constant outside its real domain" in outside_domain(zero, {}, PRE).reason
