"""Red team RT-47-h3 (helper rt2-h; fixed): a ``select`` with an infinite branch
under a constant predicate (``stablehlo_rules._constant_predicate``: ``jnp.var``'s
``where(n > ddof, s / (n - ddof), nan)``) decides the predicate by the reading's total
conventions and keeps only the branch picked. A predicate computed through a division by
zero is decided one way by the reading (``[1/0 > 0] = [0 > 0] = 0``) and the other by XLA
(``inf > 0``), and since the predicate is dropped with the other branch, no value of the
program holds the division: the tie's domain check (``render.domains``, RT-42) never saw it.

Edit of a rendered MLP (sgd) ``train_step.mlir``, before the return, the new ``head/b``
replaced by ``%rt9`` (the harness of ``test_findings_outside_domain``):

    %rtp = compare GT, divide(1, 0), 0                 (read 0; XLA 1)
    %rts2 = select(%rtp, +inf, 1)                      (read 1; XLA +inf)
    %rtc = compare GT, %rts2, 2                        (read 0; XLA 1)
    %rt9 = head/b' + select(%rtc, [y[0,0] == 0.01], 0) * [1, 0, ..., 0]

Every result was CHECKED, and on a training batch whose first label is not class 0 XLA
moves ``head/b[0]`` by 1. Fixed: such a predicate is decided only where each of its
partial operations (a division, a negative or fractional power, a log) is inside its
real domain; else the importer refuses the text, naming it.
"""
import pytest

from _tie_edits import edited_head_bias, run_step
from test_findings_outside_domain import _edit, _training_args, src  # noqa: F401  (the module's fixture)
from verigrad.render.tie import tie_directory


def _gate(divisor, rel):
    return ["%rttwo = stablehlo.constant dense<2.000000e+00> : tensor<f32>",
            f"%rtinf0 = stablehlo.divide %rtone, {divisor} : tensor<f32>",
            f"%rtp = stablehlo.compare {rel}, %rtinf0, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
            "%rtI = stablehlo.constant dense<0x7F800000> : tensor<f32>",
            "%rts2 = stablehlo.select %rtp, %rtI, %rtone : tensor<i1>, tensor<f32>",
            "%rtc = stablehlo.compare GT, %rts2, %rttwo, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"]


@pytest.fixture(scope="module")
def edited(src, tmp_path_factory):  # noqa: F811
    return edited_head_bias(src, tmp_path_factory.mktemp("rt47h3") / "pred", _edit(_gate("%rtz", "GT")))


def test_rt47_h3_xla_moves_the_bias_on_training_batches(src, edited):  # noqa: F811
    path, k = edited
    args = _training_args(src)
    assert run_step(path, args)[k][0] - run_step(src, args)[k][0] == pytest.approx(1.0, abs=1e-6)


def test_rt47_h3_the_edited_step_is_not_tied(edited):
    path, k = edited
    r = tie_directory(path).modules["train_step"].results[k]
    assert r.status == "UNKNOWN" and "a predicate that applies a partial operation" in r.reason, r.reason


def test_rt47_h3_a_predicate_inside_its_domain_still_ties(src, tmp_path):  # noqa: F811
    """``[1/2 < 0]`` is 0 in XLA as in the reading: the finite branch, and the edit is 0."""
    edited, _ = edited_head_bias(src, tmp_path / "half", _edit(_gate("%rttwo", "LT")))
    assert tie_directory(edited).ok
