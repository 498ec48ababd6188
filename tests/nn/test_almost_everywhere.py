"""A composed network is certified only where its side conditions are shown to fail on a
null set of its inputs (``verigrad.nn.almost_everywhere``): positive cases (the conditions
of dense, conv, batch norm and pooled-first layers are shown) and negative ones (a max pool
over relu outputs, or over a convolution of them, ties on a set of positive measure)."""
import jax
import numpy as np
import pytest

from verigrad.kernel import IndexVar, SizeSym, Var
from verigrad.kernel import terms as T
from verigrad.nn import almost_everywhere as AE
from verigrad.nn import builder as nb
from verigrad.nn import combinators as C
from verigrad.nn import compose
from verigrad.nn import layers as L

(B,) = jax.export.symbolic_shape("B")


def _conv_relu_pool(pool_first: bool):
    conv = C.named("conv", L.conv2d((B, 4, 4, 1), 2))
    if pool_first:
        pool = L.max_pool(conv.y)
        act = L.relu(pool.y)
        parts = [conv, pool, act]
    else:
        act = L.relu(conv.y)
        pool = L.max_pool(act.y)
        parts = [conv, act, pool]
    flat = L.flatten(parts[-1].y)
    return C.chain(*parts, flat, C.named("head", L.dense(flat.y, 3)))


def test_pooled_before_the_relu_the_conditions_are_shown():
    cert = compose.certify(_conv_relu_pool(pool_first=True))
    assert cert.unshown is None and cert.proved
    assert any(c.kind == "offkink" for th in cert.theorems.values() for c in th.conds)   # there were some to show


def test_a_max_pool_over_relu_outputs_is_not_certified():
    """A window of four negative inputs ties at 0: a set of positive measure."""
    cert = compose.certify(_conv_relu_pool(pool_first=False))
    assert cert.unshown is not None and not cert.proved
    assert "not shown to fail only on a set of measure zero" in cert.unshown


def test_a_max_pool_over_a_convolution_of_relu_outputs_is_not_certified():
    """Where the relus are all off, the second convolution's outputs are its bias at
    every position: they tie on a set of positive measure."""
    with pytest.raises(nb.NetworkError, match="almost every input"):
        nb.network("two_pools", [nb.Conv(2), nb.MaxPool(), nb.Relu(), nb.Conv(2), nb.MaxPool(), nb.Head()],
                   input=(8, 8, 1), classes=3)


def test_the_builder_pools_before_the_relu_and_computes_the_same_function():
    m = nb.network("crp", [nb.Conv(2), nb.Relu(), nb.MaxPool(), nb.Head(pool="flatten")], input=(4, 4, 1), classes=3)
    assert m.certificate is not None and m.certificate.unshown is None
    names = [c.name for c in m._symbolic.children]
    assert names.index("max_pool") < names.index("relu")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4, 4, 2))
    pooled_first = L.relu(L.max_pool((5, 4, 4, 2)).y).forward({}, L.max_pool((5, 4, 4, 2)).forward({}, x))
    relu_first = L.max_pool((5, 4, 4, 2)).forward({}, L.relu((5, 4, 4, 2)).forward({}, x))
    assert np.array_equal(np.asarray(pooled_first), np.asarray(relu_first))


@pytest.mark.parametrize("body, shape", [
    ([nb.Dense(8), nb.Relu(), nb.Dense(8), nb.Relu(), nb.Head()], (6,)),
    ([nb.Conv(2, bias=False), nb.BatchNorm(), nb.Relu(),
      nb.Residual(nb.Conv(2, bias=False), nb.BatchNorm(), nb.Relu(), nb.Conv(2, bias=False), nb.BatchNorm()),
      nb.Relu(), nb.Head(pool="avg")], (4, 4, 1)),
], ids=["mlp", "resnet_block"])
def test_relus_after_a_bias_or_a_shift_are_shown(body, shape):
    m = nb.network("ok", body, input=shape, classes=3)
    assert m.certificate.unshown is None


# -- the criteria, one by one -----------------------------------------------------------------

def test_a_shift_counts_only_where_its_variable_occurs_nowhere_else():
    i = IndexVar("i", 3)
    x, b = Var("x", (3,)), Var("b", (3,))
    assert AE._shifted(T.Index(x, [i]) * T.Index(x, [i]) + T.Index(b, [i]))
    assert not AE._shifted(T.Index(b, [i]) * T.Index(x, [i]) + T.Index(b, [i]))     # b in the rest too
    assert not AE._shifted(T.Index(b, [i]) - T.Index(b, [i]))                        # 0
    assert AE._null(T.Index(b, [i]) - T.Index(b, [i]), {}) is not None


def test_per_example_evaluation_needs_reads_at_its_own_example_only():
    n = SizeSym("n")
    i, j = IndexVar("i", n), IndexVar("j", n)
    x = Var("x", (n, 2))
    own = T.Index(x, [i, 0]) - T.Index(x, [i, 1])
    assert AE._per_example_nonzero(own)
    # the batch's mean: another example's entries, and the batch size, enter it
    mixed = T.Index(x, [i, 0]) - T.Sum(j, T.Index(x, [j, 0]))
    assert not AE._per_example_nonzero(mixed)
    assert not AE._per_example_nonzero(T.Index(x, [i, 0]) - T.Index(x, [i, 0]))       # identically 0


def test_only_integer_polynomials_are_evaluated_and_exactly():
    """``(sin^2 + cos^2 - 1) 10^20`` is 0 at every input, but float64 reads about 10^4 of
    it: a term with functions is never evaluated. An integer polynomial is, at integer
    inputs, exactly (its majorant below 2^50), and one nonzero value shows it."""
    n = SizeSym("n")
    i = IndexVar("i", n)
    x = T.Index(Var("x", (n,)), [i])
    noise = (T.Func("sin", [x]) ** 2 + T.Func("cos", [x]) ** 2 - 1) * T.Num(10 ** 20)
    assert not AE._per_example_nonzero(noise)
    assert not AE._per_example_nonzero(T.Func("sin", [x]) ** 2 + T.Num(1))
    assert AE._per_example_nonzero(x * x - 2 * x + 3)
    assert not AE._per_example_nonzero(x * x - x * x)
    assert not AE._per_example_nonzero(x * T.Num(2 ** 60))                 # past exact float64 integers
    assert not AE._per_example_nonzero(x / 3)                               # not integer coefficients


def test_the_check_stops_within_its_allowance_and_withholds():
    """Red team (DoS): the tie of a max pool over a batch-normed residual block grew
    normal forms for minutes, to 20 GB; the check stops at its clock and refuses."""
    net = nb.network("bn_residual_pool", [
        nb.Conv(4), nb.Residual(nb.Conv(4, bias=False), nb.BatchNorm(), nb.Relu(), nb.Conv(4, bias=False),
                                nb.BatchNorm()),
        nb.Relu(), nb.MaxPool(), nb.Head(pool="avg")], input=(8, 8, 1), classes=10, certify=False)
    cert = compose.certify(net._symbolic, conditions=False)
    why = AE.unshown(list(cert.theorems.values()), discrete=list(cert.aux.values()), seconds=2)
    assert why is not None and "stopped: its 2 s are spent" in why


def test_the_work_allowance_is_counted_in_monomial_products_and_stops_a_normal_form():
    from verigrad.certify import conditions as CC
    from verigrad.kernel.normal import BudgetSpent
    n = SizeSym("n", 1)
    x, y = Var("x", (n,)), Var("y", (n,))
    i, j = IndexVar("i", n), IndexVar("j", n)
    wide = T.Add([T.Index(x, (i,)), T.Index(y, (i,)), T.Index(x, (j,)), T.Index(y, (j,))])
    with CC.allowance(600, 10) as allowed:
        with pytest.raises(BudgetSpent):
            CC.normalizer().norm(T.Mul([wide, wide, wide]), ())
        with pytest.raises(BudgetSpent):       # spent for the rest of the check
            CC.normalizer()
    assert "work budget of 10" in allowed.spent
    with CC.allowance(600, 10_000) as allowed:
        CC.normalizer().norm(T.Mul([wide, wide, wide]), ())
    assert allowed.spent is None and allowed.work > 10
