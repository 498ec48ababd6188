"""Permutations in the kernel (issue 12): argsort, gathers by its entries, the inverse by
argsort(argsort(s)); the bijection rules apply only to argsort's permutations, never to
integer data (duplicates make a gather's transpose a multiplicity)."""
import json

import numpy as np
import pytest

from verigrad.kernel import (Argsort, Failure, IndexVar, IntEq, KernelError, Lamda, Num, RealCond, SizeSym, Sum,
                             Theorem, Var, prove_equal, vjp_statement)
from verigrad.trace.replay import replay
from verigrad.trace import trace_of

n, d = SizeSym("n"), SizeSym("d")
s, x, g = Var("s", (n,)), Var("x", (n,)), Var("g", (n,))
idx = Var("idx", (n,), ("integer",))
i, j, k = IndexVar("i", n), IndexVar("j", n), IndexVar("k", n)
P = Argsort(s)
Q = Argsort(P)               # argsort(argsort(s)): the inverse permutation


def gather(v, perm):
    """``v[perm]``: ``out[i] = sum_j [perm[i] == j] v[j]``, as the importer models it."""
    return Lamda([i], Sum(j, IntEq(perm[i], j) * v[j]))


def proved(a, b):
    th = prove_equal(a, b)
    assert isinstance(th, Theorem), th
    return th


def refused(a, b):
    assert isinstance(prove_equal(a, b), Failure)


def test_route_backward_is_the_gather_by_the_inverse():
    th = proved(gather(g, Q), vjp_statement(gather(x, P), x, g))
    assert {"argsort_inverse", "perm_bijection"} <= set(th.axioms())
    assert not th.conds            # linear in x: no tie condition


def test_the_permutation_itself_is_not_its_inverse():
    refused(gather(g, P), vjp_statement(gather(x, P), x, g))


def test_a_gather_by_integer_data_gets_no_bijection_rule():
    # with duplicates in idx the transpose sums the cotangent over repeats; argsort(idx)
    # is a permutation, but not idx's inverse
    refused(gather(g, Argsort(idx)), vjp_statement(gather(x, idx), x, g))
    refused(Lamda([j], Sum(i, IntEq(idx[i], j))), Lamda([j], Num(1)))     # a multiplicity, not 1
    refused(Argsort(Argsort(idx)), idx)


def test_numbers_show_the_duplicate_gather_is_wrong():
    from verigrad.certify.evaluate import evaluate
    sizes = {n: 4}
    vals = {x: np.array([1.0, 2.0, 3.0, 4.0]), g: np.array([1.0, 10.0, 100.0, 1000.0]),
            idx: np.array([2.0, 2.0, 0.0, 1.0])}
    fwd = evaluate(gather(x, idx), sizes, vals)
    assert list(fwd) == [3.0, 3.0, 1.0, 2.0]
    k2 = IndexVar("k2", n)
    transpose = Lamda([k2], Sum(i, g[i] * IntEq(idx[i], k2)))        # the scatter-add
    assert list(evaluate(transpose, sizes, vals)) == [100.0, 1000.0, 11.0, 0.0]
    assert list(evaluate(gather(g, Argsort(idx)), sizes, vals)) != [100.0, 1000.0, 11.0, 0.0]


def test_range_inverse_and_count():
    proved(Lamda([i], RealCond(P[i], ">=")), Lamda([i], Num(1)))
    proved(Lamda([i], RealCond(P[i] - n, ">=")), Lamda([i], Num(0)))
    proved(Argsort(Q), P)                                   # the inverse of the inverse
    proved(Lamda([j], Sum(i, IntEq(P[i], j))), Lamda([j], Num(1)))   # one preimage each
    proved(Sum(i, gather(x, P)[i]), Sum(j, x[j]))           # sorting keeps the sum
    refused(Lamda([j], Sum(i, IntEq(Q[i] + 1, j))), Lamda([j], Num(1)))   # j = 0 has none


def test_sort_values_backward_rests_on_distinct_entries():
    y = gather(x, Argsort(x))                                # sort(x)
    th = proved(gather(g, Argsort(Argsort(x))), vjp_statement(y, x, g))
    assert "deriv_argsort" in th.axioms()
    assert th.conds, "the derivative of argsort is taken off ties, a recorded condition"
    refused(gather(g, Argsort(x)), vjp_statement(y, x, g))


def test_group_sort_rows():
    X, G = Var("X", (n, d)), Var("G", (n, d))
    r, a, b = IndexVar("r", n), IndexVar("a", d), IndexVar("b", d)
    row = lambda T: Lamda([b], T[r, b])  # noqa: E731
    Pr = Argsort(row(X))
    Y = Lamda([r, a], Sum(b, IntEq(Pr[a], b) * X[r, b]))
    back = Lamda([r, a], Sum(b, IntEq(Argsort(Pr)[a], b) * G[r, b]))
    proved(back, vjp_statement(Y, X, G))


def test_constructors_check_shapes():
    with pytest.raises(KernelError):
        Argsort(Var("m", (n, d)))
    with pytest.raises(KernelError):
        IntEq(x, 0)


def test_a_permutation_proof_replays():
    th = proved(gather(g, Q), vjp_statement(gather(x, P), x, g))
    (name, again), = replay(json.loads(json.dumps(trace_of([("route", th)]))))
    assert again.lhs is th.lhs and again.rhs is th.rhs and "perm_bijection" in again.axioms()


def test_random_permutation_claims_are_true_when_proved():
    """A small fuzz: random pairs of vectors built by gathers through argsorts, their
    inverses, integer data, shifted indices and counts. Whatever the kernel proves, the
    witness check (on under pytest) evaluates at small sizes with ties and repeats drawn;
    here every proved pair is also compared at size 4 by hand."""
    import random
    from verigrad.certify.evaluate import evaluate
    rng = random.Random(12)
    perms = [P, Q, Argsort(Q), Argsort(idx), Argsort(Argsort(idx)), Argsort(x), Argsort(Argsort(x)), idx]

    def vec(depth):
        r = rng.random()
        if depth == 0 or r < 0.3:
            return rng.choice([x, g, s])
        if r < 0.8:
            return gather(vec(depth - 1), rng.choice(perms))
        if r < 0.9:
            p = rng.choice(perms)
            return Lamda([i], Sum(j, IntEq(p[j] + rng.choice([0, 1, -1]), i)) * vec(depth - 1)[i])
        return Lamda([i], RealCond(rng.choice(perms)[i] - rng.choice([0, 1]), ">=") * vec(depth - 1)[i])
    vals = {x: np.array([0.3, -1.0, 0.3, 2.0]), g: np.array([1.0, 10.0, 100.0, 1000.0]),
            s: np.array([5.0, -2.0, 7.0, 1.0]), idx: np.array([2.0, 2.0, 0.0, 1.0])}
    inverses = [(P, Q), (Q, P), (Argsort(x), Argsort(Argsort(x))), (Argsort(idx), Argsort(Argsort(idx))),
                (Argsort(Q), Q), (idx, Argsort(idx))]     # the last is no inverse: repeats
    proved_pairs = 0
    for _ in range(120):
        a = vec(2)
        p, q = rng.choice(inverses)
        b = rng.choice([vec(2), gather(gather(a, p), q), gather(gather(a, q), p), gather(gather(a, p), p)])
        th = prove_equal(a, b)
        if isinstance(th, Theorem):
            proved_pairs += 1
            if not th.conds:
                assert np.allclose(evaluate(a, {n: 4}, vals), evaluate(b, {n: 4}, vals)), (a, b)
    assert proved_pairs >= 20


def test_a_gather_by_a_permutation_is_undone_by_the_gather_by_its_inverse():
    proved(gather(gather(x, P), Q), x)
    proved(gather(gather(x, Q), P), x)
    refused(gather(gather(x, P), P), x)
    refused(gather(gather(x, idx), Argsort(idx)), x)     # no inverse of integer data


def test_the_printer_shows_argsort_and_integer_equalities():
    from verigrad.report.printing import latex, text
    assert text(gather(x, Q)) == "Lamda[i<n](Sum[j<n]([argsort(argsort(s))[i] == j]*x[j]))"
    assert r"\operatorname{argsort}" in latex(Q) and r"\mathbb{1}" in latex(IntEq(P[i], j))


def test_floor_division_of_a_permutation_entry():
    """Top-k routing's ``argsort(e) // k``: [floor(P[a] / k) == b] is a sum of k equalities
    (for integer-valued operands only), and its range follows from P's."""
    from verigrad.kernel import IntDiv, IntVal
    t, kk = SizeSym("t"), SizeSym("kk")
    e = Var("e", (t * kk,))
    Pk = Argsort(e)
    a, b, r = IndexVar("a", t * kk), IndexVar("b", t), IndexVar("r", kk)
    q = IntDiv(Pk[a], kk)
    proved(Lamda([a], RealCond(q, ">=")), Lamda([a], Num(1)))
    proved(Lamda([a], RealCond(q - t, ">=")), Lamda([a], Num(0)))
    refused(Lamda([a], RealCond(q - t + 1, ">=")), Lamda([a], Num(0)))
    proved(Lamda([a, b], IntEq(q, b)), Lamda([a, b], Sum(r, IntEq(Pk[a], b * kk + r))))
    # every token has exactly kk routed slots
    proved(Lamda([b], Sum(a, IntEq(q, b))), Lamda([b], IntVal(kk)))
    # floor of a real is no sum of equalities, and has no derivative here
    refused(Lamda([i], IntEq(IntDiv(x[i], 2), 0)), Lamda([i], Sum(IndexVar("r2", 2), IntEq(x[i], IndexVar("r2", 2)))))
    assert "not differentiable" in str(prove_equal(vjp_statement(Lamda([i], IntDiv(x[i], 2)), x, g), g))
    th = proved(Lamda([a, b], IntEq(q, b)), Lamda([a, b], Sum(r, IntEq(Pk[a], b * kk + r))))
    (name, again), = replay(json.loads(json.dumps(trace_of([("floor", th)]))))
    assert again.rhs is th.rhs and "floor_div_eq" in again.axioms()
