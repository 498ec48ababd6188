"""Red team RT3-B3 (helper rt3-b; fixed: a side condition is shown with its own quantifier):
``verigrad check`` printed a side condition so that the checked statement read as a false one.

A kernel condition holds "for every value of the index variables in it" (``Condition``),
whatever the statement's indices are: the kernel keeps a condition's indices its own (RT-22,
RT-23). But ``_closed`` names a condition's first free index ``i``, which is then the very
index ``i`` a statement has free, and the printer showed both alike::

    $ verigrad check cond.json          # exit 0
    cond.json: PROVED c
        x[i] + Sum[j<n](y[j]/y[j]) = x[i] + n
        under y[i] != 0
        for n >= 1; 0 <= i < n; x: real (n,); y: real (n,)

which reads "for each i with y[i] != 0, ...": false at n = 2, y = (1, 0), i = 0 (y[0] != 0,
and the left side is x[0] + 1/1 + 0/0, NaN, against x[0] + 2). The kernel's theorem asks
y[i] != 0 for every i. The same text was in ``Theorem.statement()``, the ``conditions`` of a
``verify`` record and the HTML pages. Now a condition with free indices says so:
``under y[i] != 0 for every i<n``.
"""
import json
import subprocess
import sys

import numpy as np

from verigrad.kernel import IndexVar, SizeSym, prove_equal
from verigrad.kernel import terms as T
from verigrad.trace import write_trace

n = SizeSym("n", 1)
x, y = T.Var("x", (n,)), T.Var("y", (n,))
i, j = IndexVar("i", n), IndexVar("j", n)


def _check(trace):
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", "--json", str(trace)],
                          capture_output=True, text=True, timeout=600)
    (v,) = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, v


def test_a_condition_reads_for_every_value_of_its_indices(tmp_path):
    th = prove_equal(x[i] + T.Sum(j, y[j] / y[j]), x[i] + T.IntVal(n))
    (c,) = th.conds
    assert c.term.free_idx == {i}                 # the statement's own i, by name and range
    code, v = _check(write_trace(tmp_path / "cond.json", [("c", th)]))
    assert code == 0 and v["status"] == "PROVED"
    assert v["conditions"] == ["y[i] != 0 for every i<n"], v["conditions"]
    assert "[under y[i] != 0 for every i<n]" in th.statement()


def test_the_pointwise_reading_was_false():
    xs, ys, k = np.array([5.0, 7.0]), np.array([1.0, 0.0]), 0
    assert ys[k] != 0
    with np.errstate(invalid="ignore"):
        lhs = xs[k] + np.sum(ys / ys)
    assert not lhs == xs[k] + len(ys)


def test_a_condition_without_indices_reads_as_before(tmp_path):
    s = T.Var("s", ())
    th = prove_equal(s / s, T.Num(1))
    code, v = _check(write_trace(tmp_path / "plain.json", [("s", th)]))
    assert code == 0 and v["conditions"] == ["s != 0"], v
