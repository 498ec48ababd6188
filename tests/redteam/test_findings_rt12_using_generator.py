"""Red team RT12-A (helper rt12; fixed 2026-12-03): ``prove_equal`` reads its ``using`` argument four
times, and a one-shot iterable answers only the first.

``_prove_equal`` iterates ``using`` once to build the substitution (each theorem
``|- v = t`` replaces ``v`` by ``t``), and then again for the result's hypotheses
(``_hyps(*using)``), its conditions (``_conds(*using)``) and its parents
(``tuple(using)``). A plain generator is empty after the first pass, so the decision uses
the hypothesis ``v = 1`` while the theorem it issues rests on nothing:

    h = assume(v, Num(1))                                  # v = 1 |- v = 1
    prove_equal(v, Num(1), using=(t for t in [h]))         # |- v = 1   (no hypothesis)

``|- v = 1`` for an unconstrained real ``v`` is false (v = 0). No hostile class is
needed; a generator is an ordinary argument. (``verigrad check`` refuses the written
trace: the replay is given a list, decides ``v = 1`` without the substitution and fails;
the in-process ``Theorem`` is false all the same.)

Expected fix: ``using = tuple(using)`` once at the top of ``prove_equal`` (and every
rule that takes an iterable reads it once into a tuple before checking it).
"""
import numpy as np

from verigrad.certify import witness as W
from verigrad.certify.evaluate import evaluate
from verigrad.kernel import KernelError, Num, Theorem, Var, assume, prove_equal


def test_the_statement_is_false():
    v = Var("v_rt12a")
    assert float(np.asarray(evaluate(v, {}, {v: np.float64(0.0)}))) != 1.0


def test_a_generator_of_hypotheses_is_read_once():
    v = Var("v_rt12a")
    h = assume(v, Num(1))
    try:
        with W.paused():
            res = prove_equal(v, Num(1), using=(t for t in [h]))
    except KernelError:
        return                                  # refused: fine
    if isinstance(res, Theorem):
        assert (v, Num(1)) in res.hyps, f"|- v = 1 proved without its hypothesis: hyps {set(res.hyps)}"
        assert h in res.parents


def test_a_list_still_works():
    v = Var("v_rt12a")
    res = prove_equal(v, Num(1), using=[assume(v, Num(1))])
    assert isinstance(res, Theorem) and (v, Num(1)) in res.hyps
