"""What expressions of the proof language mean: compiled kernel terms evaluated in
float64 (``verigrad.certify.evaluate``, independent of the kernel) against NumPy."""
import numpy as np
import pytest

from verigrad.certify.evaluate import evaluate
from verigrad.kernel import terms as T
from verigrad.proof import (BlockMatrix, Contains, Interval, KroneckerDelta, Lamda, Max, Min, ProofError, Sum, Swap,
                            Symbol, ZeroMatrix, drop_path, layer_norm, log_softmax, logsumexp, oo, softmax, sqrt)

rng = np.random.default_rng(0)
n = Symbol.n(domain=[1, oo], integer=True)
d = Symbol.d(domain=[1, oo], integer=True)
SIZES = {n.sym: 4, d.sym: 3}


def value(e, **arrays):
    """Evaluate an expression at concrete sizes with the given tensor values."""
    values = {}
    for node in e.walk():
        if hasattr(node, "name") and node.name in arrays and hasattr(node, "definition"):
            values[node.term] = arrays[node.name]
    return evaluate(e.term, SIZES, values)


def np_softmax(x):
    z = np.exp(x - x.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def test_attention_compiles_to_softmax_of_scaled_scores_times_values():
    Q, K, V = (Symbol(s, shape=(n, d), real=True) for s in "QKV")
    q, k, v = (rng.standard_normal((4, 3)) for _ in range(3))
    got = value(softmax(Q @ K.T / sqrt(d)) @ V, Q=q, K=k, V=v)
    assert np.allclose(got, np_softmax(q @ k.T / np.sqrt(3)) @ v)


def test_row_batched_product_and_rank3_transpose():
    Q = Symbol.Q(shape=(n, d), real=True)
    A = Symbol.A(shape=(n, n, d), real=True)
    q, a = rng.standard_normal((4, 3)), rng.standard_normal((4, 4, 3))
    got = value(Q @ A.T, Q=q, A=a)          # (Q @ A^T)[i] = Q[i] @ A[i]^T
    assert np.allclose(got, np.einsum("ic,ijc->ij", q, a))


def test_broadcasting_adds_a_matrix_to_each_slice_of_a_batch():
    K = Symbol.K(shape=(n, d), real=True)
    A = Symbol.A(shape=(n, n, d), real=True)
    k, a = rng.standard_normal((4, 3)), rng.standard_normal((4, 4, 3))
    assert np.allclose(value(K + A, K=k, A=a), k[None] + a)


def test_layer_norm_log_softmax_logsumexp():
    x = Symbol.x(shape=(n,), real=True)
    eps = Symbol.eps(positive=True)
    xv, ev = rng.standard_normal(4), np.array(0.1)
    ln = (xv - xv.mean()) / np.sqrt(xv.var() + 0.1)
    assert np.allclose(value(layer_norm(x, eps), x=xv, eps=ev), ln)
    assert np.allclose(value(log_softmax(x), x=xv), np.log(np_softmax(xv)))
    assert np.isclose(value(logsumexp(x), x=xv), np.log(np.exp(xv).sum()))


def test_block_matrix_and_swap():
    W = Symbol.W(shape=(n, n), real=True)
    w = rng.standard_normal((4, 4))
    got = value(BlockMatrix([[W, ZeroMatrix(n, 1)], [ZeroMatrix(1, n), 1]]), W=w)
    want = np.zeros((5, 5))
    want[:4, :4], want[4, 4] = w, 1
    assert np.allclose(got, want)
    i = Symbol.i(integer=True, domain=[0, n - 1])
    j = Symbol.j(integer=True, domain=[0, n - 1])
    every = evaluate(Lamda[j:n, i:n](Swap(n, i, j)).term, SIZES, {})      # all swaps at once
    for vi, vj in ((0, 2), (1, 1), (3, 0)):
        p = np.eye(4)[[{vi: vj, vj: vi}.get(r, r) for r in range(4)]]
        assert np.allclose(every[vi, vj], p)


def test_min_max_indices_compile_to_clipped_reads():
    k = Symbol.k(integer=True, positive=True)
    i = Symbol.i(integer=True)
    j = Symbol.j(integer=True)
    w = Symbol.w(shape=(2 * k + 1,), real=True)
    lam = Lamda[j:n, i:n](w[k + Min(Max(j - i, -k), k)])
    wv = rng.standard_normal(5)
    got = evaluate(lam.term, {**SIZES, k.sym: 2}, {w.term: wv})
    want = np.array([[wv[2 + min(max(jj - ii, -2), 2)] for jj in range(4)] for ii in range(4)])
    assert np.allclose(got, want)
    a = Symbol.a(integer=True, domain=[0, n - 1])
    b = Symbol.b(integer=True, domain=[0, n - 1])
    inside, _ = Contains(k + Min(Max(b - a, -k), k), Interval(0, 2 * k)).pair()
    assert evaluate(T.Lamda([a.sym, b.sym], inside), {**SIZES, k.sym: 2}, {}).min() == 1
    outside, _ = Contains(k + Min(Max(b - a, -k), k), Interval(0, 2 * k - 1)).pair()
    assert evaluate(T.Lamda([a.sym, b.sym], outside), {**SIZES, k.sym: 2}, {}).min() == 0


def test_kronecker_sum_and_drop_path():
    x = Symbol.x(shape=(n, d), real=True)
    m = Symbol.m(shape=(n,), real=True)
    keep = Symbol.keep(positive=True)
    xv, mv = rng.standard_normal((4, 3)), np.array([1.0, 0.0, 1.0, 1.0])
    got = value(drop_path(x, m, keep), x=xv, m=mv, keep=np.array(0.75))
    assert np.allclose(got, xv * mv[:, None] / 0.75)
    i = Symbol.i(integer=True)
    j = Symbol.j(integer=True)
    y = Symbol.y(shape=(n,), real=True)
    yv = rng.standard_normal(4)
    assert np.allclose(value(Lamda[i:n](Sum[j:n](KroneckerDelta(i, j) * y[j])), y=yv), yv)


def test_ill_formed_expressions_say_what_is_wrong():
    A = Symbol.A(shape=(n, d), real=True)
    with pytest.raises(ProofError, match="@ of shapes"):
        A @ A
    i = Symbol.i(integer=True, domain=[0, n])
    with pytest.raises(ProofError, match="not provably inside"):
        A[i].term
    with pytest.raises(ProofError, match="domain must start at 0"):
        Symbol.t(integer=True, domain=[1, n])
    with pytest.raises(ProofError, match="a size is at least 1"):
        Symbol.m(integer=True, domain=[0, oo])


def test_slices_and_columns():
    r = Symbol.r(domain=[4, oo], integer=True)
    c = Symbol.c(domain=[3, oo], integer=True)
    X = Symbol.X(shape=(r, c), real=True)
    xv = rng.standard_normal((5, 3))
    sizes = {r.sym: 5, c.sym: 3}
    assert np.allclose(evaluate(X[:, 1].term, sizes, {X.term: xv}), xv[:, 1])
    assert np.allclose(evaluate(X[1:3].term, sizes, {X.term: xv}), xv[1:3])
    assert np.allclose(evaluate(X.T[2].term, sizes, {X.term: xv}), xv[:, 2])
    with pytest.raises(ProofError, match="not provably inside"):
        X[:, 3].term            # c may be 3
