"""Red team RT6-A3: reify's one-hot cotangent captured a statement's own index ``o0``.

A side condition on a Jacobian entry ``J[o0, k]`` of an opaque TensorFn is stated (reify)
as the VJP of the one-hot cotangent ``Lamda[o0'](delta(o0', o0))``. Its binder was always
named ``o0``: when the statement has its own free index ``o0`` of that range, the binder
captured it and the condition read ``Lamda[o0](delta(o0, o0))``, the all-ones cotangent:
``J[o0,k] * J[o0,k]^-1 = 1`` was proved under "every column sum of J is nonzero" instead
of "every entry of J is nonzero". At f(x) = (x0 + x1, x1) the column sums are 1 and 2,
while J[1, 0] = 0 makes the left side 0 (``= 0`` proves too): 0 = 1 under a condition
that holds.

Also: instantiating a TensorFn in a theorem with side conditions raised AttributeError.
"""
import numpy as np

from verigrad.certify.evaluate import evaluate
from verigrad.kernel import (Delta, FnLam, IndexVar, Lamda, Num, Pow, SizeSym, TensorFn, Theorem, Var, Vjp,
                             instantiate, prove_equal)

n = SizeSym("n")
f = TensorFn("f", [[n]], [n])
x = Var("x", (n,))
o0, k, t = IndexVar("o0", n), IndexVar("k", n), IndexVar("t", n)
J = Vjp(f, 0, (x,), Lamda([t], Delta(t, o0)))[k]      # the Jacobian entry J[o0, k]


def _theorem():
    th = prove_equal(J * Pow(J, -1), Num(1))
    assert isinstance(th, Theorem)
    (cond,) = [c for c in th.conds if c.kind == "nonzero"]
    return th, cond


def test_a3_the_condition_is_on_every_entry_not_on_column_sums():
    th, cond = _theorem()
    # J[j, i] != 0 for every i and every j: two free indices, not one
    assert len(cond.term.free_idx) == 2, cond.term


def test_a3_at_a_function_with_a_zero_entry_the_condition_fails():
    th, _ = _theorem()
    p, j = Var("p", (2,)), IndexVar("j", 2)
    lam = FnLam((p,), Lamda([j], p[j] + p[1] * Delta(j, 0)))       # f(p) = (p0 + p1, p1)
    inst = instantiate(instantiate(th, {n: 2}), {TensorFn("f", [[2]], [2]): lam})
    (cond,) = [c for c in inst.conds if c.kind == "nonzero"]
    idx = sorted(cond.term.free_idx, key=lambda v: v.name)
    vals = evaluate(Lamda(idx, cond.term), {}, {Var("x", (2,)): np.array([0.3, 0.7])})
    assert np.min(np.abs(np.asarray(vals))) < 1e-6, vals     # J[1, 0] = 0: the condition is not met


def test_a3_true_neighbour():
    th = prove_equal(J * Pow(J, -1) * J, J)
    assert isinstance(th, Theorem)
