"""A decision's plan (issue 10's replay cost): the proof records which pass of the decision
succeeded (its strictness, the splits of free indices before it, where its choices
start), and the replay makes that pass alone. A plan is data the kernel checks: an
edited one can only make the replay fail, never state something else."""
import json

import pytest

from verigrad.kernel import Delta, IndexVar, IntCond, Lamda, RealCond, SizeSym, Theorem, Var, prove_equal
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly
from verigrad.trace import trace_of
from verigrad.trace.replay import TraceError, replay

n = SizeSym("n")


def split_proof() -> Theorem:
    """A free index read through ``c // 2``: the first pass leaves a floor division, the
    index is split as ``2 u + v`` and the second pass proves it."""
    y = Var("y", (n, 2))
    c = IndexVar("c", 2 * n)
    C = Poly.sym(c)
    th = prove_equal(Lamda((c,), T.Index(y, (C // 2, C % 2)) * IntCond(C % 2, "<", 1)),
                     Lamda((c,), T.Index(y, (C // 2, 0)) * Delta(C % 2, 0)))
    assert isinstance(th, Theorem) and "index_split" in th.axioms()
    return th


def strict_proof() -> Theorem:
    """[x >= 0] = [x > 0] off the kink: the loose pass leaves a difference, the strict one
    proves it under the condition x != 0."""
    x = Var("x", ())
    th = prove_equal(RealCond(x, ">="), RealCond(x, ">"))
    assert isinstance(th, Theorem) and th.conds
    return th


def decide_step(trace):
    return next(s for s in trace["steps"] if s["rule"] == "decide")


def test_the_plan_is_written_and_replayed():
    for th, strict, splits in ((split_proof(), False, 1), (strict_proof(), True, 0)):
        assert th.args[3][:2][0] is strict and len(th.args[3][1]) == splits
        trace = json.loads(json.dumps(trace_of([("claim", th)])))
        plan = decide_step(trace)["args"][2]
        assert plan[0] == "t" and plan[1] is strict
        ((_, again),) = replay(trace)
        assert (again.lhs, again.rhs, again.conds) == (th.lhs, th.rhs, th.conds)


def test_an_edited_plan_is_refused():
    trace = json.loads(json.dumps(trace_of([("claim", strict_proof())])))
    decide_step(trace)["args"][2][1] = False                   # the loose pass only: a difference is left
    with pytest.raises(TraceError, match="step"):
        replay(trace)
    trace = json.loads(json.dumps(trace_of([("claim", split_proof())])))
    plan = decide_step(trace)["args"][2]
    original = json.loads(json.dumps(plan))
    plan[2] = ["t"]                                             # no split: the floor division stays
    with pytest.raises(TraceError, match="step"):
        replay(trace)
    plan[:] = original
    plan[2][1][1] = ["i", 5]                                    # a free index that is not there
    with pytest.raises(TraceError, match="step"):
        replay(trace)
    plan[:] = original
    k = len(trace["objects"])
    trace["objects"].append(["poly", [[3, []]]])                # a range 2n split by 3
    plan[2][1][3] = k
    with pytest.raises(TraceError, match="not one of a range"):
        replay(trace)
    plan[:] = original
    plan[:] = ["t", False, ["t"], ["i", -1]]                    # malformed
    with pytest.raises(TraceError, match="step"):
        replay(trace)


def test_a_trace_without_plans_still_replays():
    """Traces written before plans (a decision's args are its two sides): the replay
    searches the passes as the proof did."""
    for th in (split_proof(), strict_proof()):
        trace = json.loads(json.dumps(trace_of([("claim", th)])))
        del decide_step(trace)["args"][2]
        ((_, again),) = replay(trace)
        assert (again.lhs, again.rhs, again.conds) == (th.lhs, th.rhs, th.conds)
