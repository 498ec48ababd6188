"""A trace holding a huge power is refused at once (a denial of service, noted in the
last two sessions: ``n ** 1000000000`` in a trace's polynomial made the decoder multiply
a billion times, and ``x ** 1000000000`` would have the kernel expand it). A proof the
kernel made holds small powers; those still replay."""
import json
import time

import pytest

from verigrad.kernel import IntVal, Num, Var, prove_equal
from verigrad.kernel.sizes import Poly, SizeSym
from verigrad.trace import trace_of
from verigrad.trace.replay import MAX_POWER, TraceError, replay


def _trace_of_a_power(k):
    x = Var("x")
    th = prove_equal((x + Num(1)) ** Num(3), x ** Num(3) + Num(3) * x ** Num(2) + Num(3) * x + Num(1))
    trace = json.loads(json.dumps(trace_of([("cube", th)])))
    # the exponent 3 of the claim, made k
    for entry in trace["objects"]:
        if entry[0] == "Pow" and entry[2] == ["q", 3, 1]:
            entry[2] = ["q", k, 1]
    return trace


def test_a_small_power_replays():
    (name, th), = replay(_trace_of_a_power(3))
    assert name == "cube"


@pytest.mark.parametrize("k", [10 ** 9, -(10 ** 9), MAX_POWER + 1])
def test_a_huge_power_is_refused_at_once(k):
    t0 = time.perf_counter()
    with pytest.raises(TraceError, match="beyond"):
        replay(_trace_of_a_power(k))
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("k", [2, 10 ** 9])
def test_a_huge_size_power_is_refused_at_once(k):
    n = SizeSym("n")
    th = prove_equal(IntVal(Poly.sym(n) * Poly.sym(n)), IntVal(Poly.sym(n) * Poly.sym(n)))
    trace = json.loads(json.dumps(trace_of([("square", th)])))
    assert trace["objects"][1] == ["poly", [[1, [[0, 2]]]]]       # n ** 2
    trace["objects"][1] = ["poly", [[1, [[0, k]]]]]
    if k == 2:
        assert replay(trace)[0][0] == "square"
        return
    t0 = time.perf_counter()
    with pytest.raises(TraceError, match="beyond"):
        replay(trace)
    assert time.perf_counter() - t0 < 5
