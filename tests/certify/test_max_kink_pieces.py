"""A kink or nonzero condition ``a - max_j B(j) != 0`` (off the kink of ``max(m, sink)``,
an attention sink) holds almost everywhere when each ``a - B(j)`` does: a maximum over a
non-empty range is attained, so the zero set of ``a - max_j B(j)`` lies in the union
over ``j`` of the zero sets of ``a - B(j)`` (``conditions.analytic_pieces``; a mask
indicator of a boolean argument is split into its two values the same way). Each piece
must be real-analytic and not identically zero; a piece that is identically zero, a
max under a sum over an index it depends on, integer data or a relu inside the max
keep the condition refused."""
from fractions import Fraction

import jax
import jax.numpy as jnp

import verigrad
from _max_conditions import PLANS, b, d, i, mask, masked_max, n, s, verdict
from verigrad.certify.conditions import analytic_pieces, piecewise_part
from verigrad.kernel import Delta, IndexVar, Num, RealCond, ReduceMax, Sum, Var

sink = Var("sink")
k = Var("k", (n, d), facts={"integer"})
c = IndexVar("c", d)


def _sample(sizes, rng):
    shape = (sizes[n], sizes[d])
    return {s: rng.normal(size=shape), sink: rng.normal(size=()), mask: (rng.random(shape) < 0.5).astype(float),
            k: rng.integers(0, 3, size=shape).astype(float)}


def _verdict(term, plans=PLANS):
    return verdict("offkink", term, _sample, plans)


def test_sink_minus_a_max_is_accepted():
    assert piecewise_part(sink - ReduceMax(b, s[i, b])) is not None        # a max: not analytic itself
    assert _verdict(sink - ReduceMax(b, s[i, b])) is None
    pieces = analytic_pieces(sink - ReduceMax(b, s[i, b]))
    assert len(pieces) == 1 and piecewise_part(pieces[0]) is None


def test_sink_minus_a_masked_max_is_accepted():
    # splash attention with sinks: max(masked row max, sink); its mask and its inner min eliminated too
    pieces = analytic_pieces(sink - masked_max(i))
    assert pieces is not None and len(pieces) == 2 and all(piecewise_part(p) is None for p in pieces)
    assert _verdict(sink - masked_max(i)) is None


def test_a_piece_identically_zero_is_refused():
    # s[i, 0] - max_b s[i, b] is 0 wherever s[i, 0] is the row maximum: a region
    assert _verdict(s[i, 0] - ReduceMax(b, s[i, b])) is not None
    # (sink - 100) - max(sink - 100, s[i, 1:]) is 0 wherever every s[i, b] < sink - 100: a region no
    # draw reaches (the condition is nonzero at every draw); its piece at b = 0 is identically 0
    low = sink - Num(100)
    t = low - ReduceMax(b, s[i, b] + Delta(b, 0) * (low - s[i, b]))
    bad = _verdict(t, PLANS[1:])
    assert bad is not None and "pieces" in bad, bad
    # the same through a mask: where mask[i, 0] is false the condition is 0 for every input
    bad = _verdict(RealCond(mask[i, 0], ">") * (sink - ReduceMax(b, s[i, b])))
    assert bad is not None


def test_a_max_of_piecewise_entries_is_refused():
    relu = ReduceMax(b, RealCond(s[i, b], ">") * s[i, b])         # s read outside the indicator: not a mask
    assert analytic_pieces(sink - relu) is not None
    assert _verdict(sink - relu) is not None and "piecewise" in _verdict(sink - relu)
    clipped = ReduceMax(b, RealCond(s[i, b] - Num(100), ">") * (s[i, b] - Num(100)))
    assert _verdict(sink - clipped) is not None


def test_a_max_under_a_sum_over_its_index_is_refused():
    # sum_c (s[i, c] - max_b (s[i, b] s[i, c])): one maximizer per c, not one in all
    t = Sum(c, s[i, c] - ReduceMax(b, s[i, b] * s[i, c]))
    assert analytic_pieces(t) is not None and any(piecewise_part(p) is not None for p in analytic_pieces(t))
    assert _verdict(t) is not None


def test_integer_data_is_refused():
    t = sink - ReduceMax(b, s[i, b] + k[i, b])
    assert _verdict(t) is not None and "piecewise" in _verdict(t)


def test_too_many_pieces_are_refused():
    many = sink
    for r in range(5):            # five maxima, each with a mask to split: 32 pieces
        many = many + Num(Fraction(1, r + 2)) * ReduceMax(b, s[i, b] * Num(r + 1) + RealCond(mask[i, b], ">"))
    assert analytic_pieces(many) is None
    assert _verdict(many) is not None


# -- end to end ---------------------------------------------------------------------------------

def _sink_core(x, sink):
    m = jnp.maximum(jnp.max(x, -1), sink)
    e = jnp.exp(x - m[:, None])
    l = jnp.sum(e, -1) + jnp.exp(sink - m)
    return e / l[:, None], m + jnp.log(l)


def _sink_softmax(bwd):
    f = jax.custom_vjp(lambda x, sink: _sink_core(x, sink)[0])
    f.defvjp(lambda x, sink: (_sink_core(x, sink)[0], _sink_core(x, sink)), bwd)
    return f


def _right(res, g):
    p, _ = res
    return p * (g - jnp.sum(g * p, -1, keepdims=True)), jnp.zeros(())


def _wrong(res, g):         # the softmax backward without the sink's share: wrong wherever p_sink > 0
    p, _ = res
    return p * g - p * jnp.sum(g * p, -1, keepdims=True) * jnp.sum(p, -1, keepdims=True), jnp.zeros(())


def test_a_sink_softmax_backward_is_proved_off_the_kink_of_its_max():
    cert = verigrad.certify(_sink_softmax(_right), {"x": "n, k", "sink": ""}, wrt=["x"])
    assert cert.status == "PROVED", cert.detail
    assert any("sink - max" in c and "kink" in c for c in cert.side_conditions), cert.side_conditions


def test_a_wrong_sink_softmax_backward_is_refuted():
    f = _sink_softmax(_wrong)
    cert = verigrad.certify(f, {"x": "n, k", "sink": ""}, wrt=["x"])
    assert cert.status == "REFUTED", cert.detail
    cx = cert.counterexample
    with jax.enable_x64(True):
        x, sk = jnp.asarray(cx.inputs["x"]), jnp.asarray(cx.inputs["sink"])
        g = jnp.asarray(cx.cotangents["dy"])
        want = jax.vjp(lambda x: _sink_core(x, sk)[0], x)[1](g)[0]
        got = jax.vjp(lambda x: f(x, sk), x)[1](g)[0]
    idx = tuple(cx.index)
    assert abs(float(want[idx]) - float(got[idx])) > 1e-6      # genuine


def _first_is_max(x):
    return x * jnp.where(x[0] - jnp.max(x) >= 0, 1.0, 0.0)


def test_a_backward_wrong_where_an_entry_is_the_max_is_not_proved():
    # [x0 - max x >= 0] and [x0 - max x > 0] agree off x0 - max x = 0, which holds wherever x0 is the
    # maximum: the backward below is 0 there, JAX's derivative is not
    f = jax.custom_vjp(_first_is_max)
    f.defvjp(lambda x: (_first_is_max(x), x), lambda x, g: (g * jnp.where(x[0] - jnp.max(x) > 0, 1.0, 0.0),))
    cert = verigrad.certify(f, {"x": "n"}, search_seconds=3)
    assert cert.status != "PROVED", cert.side_conditions
