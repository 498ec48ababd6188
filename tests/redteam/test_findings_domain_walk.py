"""Red team RT-47-h1 (helper rt2-h; fixed): the render tie's domain check
(``render.domains.outside_domain``) walked the definitions of the text's values with one
``seen`` set for the whole program, so a partial operation already met in an earlier
value was skipped in every later one. Two identical ``divide`` operations of a value not
shown positive give two values with the same definition: the first is marked (and can be
dead code), the second is not, and nothing computed from the second is tainted.

Edit of a rendered MLP (sgd) ``train_step.mlir`` (the harness of
``test_findings_data_pole``, RT-46-f1), with one extra, unused line:

    %rtdead = divide(1, y[0,0] - 0.01)                 (marked, used by nothing)
    %rtinf = divide(1, y[0,0] - 0.01)                  (the same definition: skipped)
    %rtp = multiply(0, %rtinf)                         (read 0; XLA NaN at y[0,0] = 0.01f)
    %rtc = not(compare EQ, %rtp, 0)
    %rt9 = head/b' + select(%rtc, [y[0,0] == 0.01], 0) * [1, 0, ..., 0]

Every result was CHECKED, and on a training batch whose first label is not class 0 XLA
moves ``head/b[0]`` by 1. Fixed: each definition is walked on its own (the verdict of a
partial operation is shared, not the walk), so every value that applies a partial
operation not shown inside its domain is marked.
"""
from fractions import Fraction

import numpy as np
import pytest

from _tie_edits import edited_head_bias, run_step
from test_findings_data_pole import POLE_AT_DATA
from test_findings_outside_domain import _edit, _training_args, src  # noqa: F401  (the module's fixture)
from verigrad.kernel import terms as T
from verigrad.render.domains import NONNEG, outside_domain
from verigrad.render.programs import Program, Value
from verigrad.render.tie import tie_directory

DEAD = "%rtdead = stablehlo.divide %rtone, %rtd : tensor<f32>"


def _program(divisor):
    """``out = y + 0 * b`` with ``a = 1/d`` (unused) and ``b = 1/d``, ``d = divisor(y, v)``."""
    y, v = T.Var("y", (3,)), T.Var("opt/v/w", (3,))
    d, a, b, out = (T.Var(n, (3,)) for n in ("d", "a", "b", "out"))
    values = [Value(d, divisor(y, v), "f:1"), Value(a, T.Pow(d, Fraction(-1)), "f:2"),
              Value(b, T.Pow(d, Fraction(-1)), "f:3"), Value(out, T.Add((y, T.Mul((T.Num(0), b)))), "f:4")]
    return Program((y, v), values, [out]), {y: np.ones(3), v: np.ones(3)}


def test_rt47_h1_a_repeated_division_is_marked_in_each_value():
    p, env = _program(lambda y, v: T.Add((y, T.Num(Fraction(-1, 100)))))
    out = outside_domain(p, env, {"opt/v/w": NONNEG})
    assert set(out.bad) == {p.values[1].var, p.values[2].var}
    assert out.reaches(p.results[0]) and "(f:3)" in out.bad[p.values[2].var]
    ok, env = _program(lambda y, v: T.Add((v, T.Num(Fraction(1, 10**8)))))        # v + eps: shown positive
    assert not outside_domain(ok, env, {"opt/v/w": NONNEG}).bad


@pytest.fixture(scope="module")
def edited(src, tmp_path_factory):  # noqa: F811
    lines = POLE_AT_DATA[:1] + [DEAD] + POLE_AT_DATA[1:]
    return edited_head_bias(src, tmp_path_factory.mktemp("rt47h1") / "twice", _edit(lines))


def test_rt47_h1_xla_moves_the_bias_on_training_batches(src, edited):  # noqa: F811
    path, k = edited
    args = _training_args(src)
    assert run_step(path, args)[k][0] - run_step(src, args)[k][0] == pytest.approx(1.0, abs=1e-6)


def test_rt47_h1_the_edited_step_is_not_tied(edited):
    path, k = edited
    r = tie_directory(path).modules["train_step"].results[k]
    assert r.status == "UNKNOWN" and "a division" in r.reason and "not shown positive" in r.reason, r.reason


def test_rt47_h1_a_repeated_division_by_a_constant_still_ties(src, tmp_path):  # noqa: F811
    """``1/2`` twice: each is inside its domain, and the edit (``[1/2 < 0] = 0``) ties."""
    gate = ["%rttwo = stablehlo.constant dense<2.000000e+00> : tensor<f32>",
            "%rtdead = stablehlo.divide %rtone, %rttwo : tensor<f32>",
            "%rth = stablehlo.divide %rtone, %rttwo : tensor<f32>",
            "%rtc = stablehlo.compare LT, %rth, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"]
    edited, _ = edited_head_bias(src, tmp_path / "half", _edit(gate))
    assert tie_directory(edited).ok
