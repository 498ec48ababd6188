"""Issue 12: the hand-written backwards people ship. Each capability has a correct backward
(PROVED, or UNKNOWN where the kernel cannot yet decide it) and a wrong twin (REFUTED with
a counterexample that JAX confirms): stop_gradient as JAX reads it, preconditions, masks
written with -inf and with a finite mask value, float32 casts, claims about some outputs
or arguments only, sizes with lower bounds, held arguments and defaults, custom_gradient,
cumsum, max pooling, float constants, permutations (argsort, gathers by data, scatter-add),
code the importer refuses, replayable
counterexamples, time limits and work budgets."""
import json
import subprocess
import sys
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad
from verigrad.cli import main


def vjp(fwd_fn, bwd_fn, nondiff=()):
    """A custom_vjp whose primal is ``fwd_fn`` (residuals: the arguments)."""
    f = jax.custom_vjp(fwd_fn, nondiff_argnums=nondiff)
    f.defvjp(lambda *a: (fwd_fn(*a), a), bwd_fn)
    return f


def genuine(cert, fn, shapes, argnames):
    """The counterexample, run again: jax.vjp of the undecorated forward differs from the
    custom backward at the reported entry, by the reported values."""
    ce = cert.counterexample
    pos = argnames.index(ce.argument)
    with jax.enable_x64(True):
        args = [jnp.asarray(ce.inputs[a]) for a in argnames]

        def at(f):
            return lambda x: f(*[x if k == pos else a for k, a in enumerate(args)])
        ct = jnp.asarray(ce.cotangents["dy"])
        want = jax.vjp(at(fn.fun), args[pos])[1](ct)[0]
        got = jax.vjp(at(fn), args[pos])[1](ct)[0]
    i = tuple(ce.index)
    assert abs(float(want[i]) - float(got[i])) > 1e-6 * max(abs(float(want[i])), 1e-9)
    assert float(got[i]) == pytest.approx(ce.got, rel=1e-6, abs=1e-9)
    assert float(want[i]) == pytest.approx(ce.expected, rel=1e-4, abs=1e-7)


# -- stop_gradient means what JAX means ---------------------------------------------------

def _sq(x):
    return x * jax.lax.stop_gradient(x)


def test_stop_gradient_has_derivative_zero():
    right = vjp(_sq, lambda res, dy: (dy * res[0],))
    wrong = vjp(_sq, lambda res, dy: (2 * dy * res[0],))
    cert = verigrad.certify(right, {"x": "n"})
    assert cert.status == "PROVED" and "At" in type(cert.wrt["x"].theorem.rhs).__name__
    cert = verigrad.certify(wrong, {"x": "n"})
    assert cert.status == "REFUTED"
    genuine(cert, wrong, {"x": "n"}, ["x"])


def test_stop_gradient_identity_keeps_the_mathematical_reading():
    right = vjp(_sq, lambda res, dy: (dy * res[0],))
    full = vjp(_sq, lambda res, dy: (2 * dy * res[0],))
    assert verigrad.certify(full, {"x": "n"}, stop_gradient="identity").status == "PROVED"
    assert verigrad.certify(right, {"x": "n"}, stop_gradient="identity").status == "REFUTED"


# -- preconditions ------------------------------------------------------------------------

def _xent(logits, targets):
    return -jnp.sum(targets * jax.nn.log_softmax(logits, -1))


def _xent_bwd(res, g):
    logits, targets = res
    return g * (jax.nn.softmax(logits, -1) - targets), -g * jax.nn.log_softmax(logits, -1)


def test_sum_to_one_precondition_is_a_stated_hypothesis():
    f = vjp(_xent, _xent_bwd)
    shapes = {"logits": "n, k", "targets": "n, k"}
    cert = verigrad.certify(f, shapes, assume=["sum(targets, -1) == 1"])
    assert cert.status == "PROVED"
    assert any(h.startswith("assumes sum(targets, -1) == 1") for h in cert.hypotheses)
    assert any("assumes sum(targets, -1) == 1" in s for s in cert.side_conditions)
    cert = verigrad.certify(f, shapes)
    assert cert.status == "REFUTED" and cert.counterexample.argument == "logits"
    t = np.asarray(cert.counterexample.inputs["targets"])
    assert np.any(np.abs(t.sum(-1) - 1) > 1e-3), "the counterexample violates the assumption"
    genuine(cert, f, shapes, ["logits", "targets"])


def test_lower_bound_precondition():
    m = 1000.0
    f = vjp(jnp.sqrt, lambda res, g: (g / jnp.sqrt(jnp.maximum(res[0], 1 / (4 * m ** 2))) / 2,))
    assert verigrad.certify(f, {"x": "n"}, assume=["x > 1/(4*1000**2)"]).status == "PROVED"
    cert = verigrad.certify(f, {"x": "n"})
    assert cert.status == "REFUTED" and 0 < float(np.min(cert.counterexample.inputs["x"])) < 2.5e-7


# -- masks ----------------------------------------------------------------------------------

def _masked_probs(s, mask):
    s = jnp.where(mask, s, -jnp.inf)
    p = jnp.exp(s - jnp.max(s, -1, keepdims=True))
    return p / jnp.sum(p, -1, keepdims=True)


def _softmax_bwd(p, g):
    return p * (g - jnp.sum(g * p, -1, keepdims=True))


def test_data_mask_with_minus_inf():
    right = jax.custom_vjp(_masked_probs)
    right.defvjp(lambda s, m: (_masked_probs(s, m), _masked_probs(s, m)), lambda p, g: (_softmax_bwd(p, g), None))
    shapes = {"s": "n, k", "mask": "n, k:bool"}
    cert = verigrad.certify(right, shapes, search_seconds=2)
    assert cert.status == "UNKNOWN" and 'any(mask, -1)' in cert.detail     # a row may be masked throughout
    cert = verigrad.certify(right, shapes, assume=["any(mask, -1)"])
    assert cert.status == "PROVED" and cert.validation.startswith("agrees with JAX")
    assert any(h.startswith("assumes any(mask, -1)") for h in cert.hypotheses)
    unmasked = jax.custom_vjp(_masked_probs)
    unmasked.defvjp(lambda s, m: (_masked_probs(s, m), s),
                    lambda s, g: (_softmax_bwd(jax.nn.softmax(s, -1), g), None))
    cert = verigrad.certify(unmasked, shapes, assume=["any(mask, -1)"])
    assert cert.status == "REFUTED" and cert.counterexample.argument == "s"
    m = np.asarray(cert.counterexample.inputs["mask"])
    assert np.all(np.any(m, -1)), "the counterexample satisfies the assumption"


MASK = -0.7 * float(np.finfo(np.float32).max)


def _causal_probs(s):
    n = s.shape[0]
    keep = jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]
    return jax.nn.softmax(jnp.where(keep, s, MASK), -1)


def _causal_bwd_zeroed(s, g):
    n = s.shape[0]
    keep = jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]
    p = jnp.where(keep, _causal_probs(s), 0.0)        # masked probabilities taken as 0
    return (_softmax_bwd(p, g),)


def test_finite_mask_value_says_what_holds():
    f = jax.custom_vjp(_causal_probs)
    f.defvjp(lambda s: (_causal_probs(s), s), _causal_bwd_zeroed)
    # in exact reals exp(MASK - m) > 0: not the exact VJP, and not refutable in floats
    cert = verigrad.certify(f, {"s": "n, n"}, search_seconds=2)
    assert cert.status == "UNKNOWN"
    cert = verigrad.certify(f, {"s": "n, n"}, mask_value_as_inf=True)
    assert cert.status == "PROVED"
    assert any("is read as -inf" in a and "fully masked row" in a for a in cert.assumptions)
    dropped = jax.custom_vjp(_causal_probs)          # the softmax's <g, p> term dropped: p * g
    dropped.defvjp(lambda s: (_causal_probs(s), s), lambda s, g: (_causal_probs(s) * g,))
    cert = verigrad.certify(dropped, {"s": "n, n"}, mask_value_as_inf=True)
    assert cert.status == "REFUTED"


# -- float32 casts --------------------------------------------------------------------------

def _rms32(x):
    x32 = x.astype(jnp.float32)
    return (x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, -1, keepdims=True) + 1e-6)).astype(x.dtype)


def _rms_bwd(res, dy, scale=1.0):
    (x,) = res
    r = jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6)
    return (scale * r * (dy - x * r * r * jnp.mean(dy * x, -1, keepdims=True)),)


def test_float32_computation_is_checked_at_its_precision():
    cert = verigrad.certify(vjp(_rms32, _rms_bwd), {"x": "n, d"})
    assert cert.status == "PROVED" and cert.validation.startswith("agrees with JAX")
    assert any("computes in float32" in a for a in cert.assumptions)
    cert = verigrad.certify(vjp(_rms32, partial(_rms_bwd, scale=1.01)), {"x": "n, d"})
    assert cert.status == "REFUTED"


# -- some outputs, some arguments, lower bounds, held values ----------------------------------

def _with_aux(x, w):
    y = x @ w
    return jnp.sum(y * y), jnp.max(jnp.abs(y))       # (loss, a statistic for logging)


def _aux_bwd(res, g):
    x, w = res
    y = x @ w
    return 2 * g[0] * y @ w.T, 2 * g[0] * x.T @ y


def test_output_selects_the_claim():
    f = vjp(_with_aux, _aux_bwd)
    shapes = {"x": "n, d", "w": "d, m"}
    cert = verigrad.certify(f, shapes, output=[0])
    assert cert.status == "PROVED" and len(cert.forward) == 1 and cert.settings["output"] == [0]
    assert verigrad.certify(f, shapes, output=[0], wrt=["w"]).wrt.keys() == {"w"}


def test_lower_bound_of_a_size():
    f = vjp(lambda x: x / (x.shape[-1] - 1), lambda res, g: (g / (res[0].shape[-1] - 1),))
    cert = verigrad.certify(f, {"x": "n, k"}, minimum={"k": 2})
    assert cert.status == "PROVED" and "k in {2," in cert.validation


def test_static_values_and_defaults():
    scale = vjp(lambda x, c: c * x, lambda c, res, dy: (c * dy,), nondiff=(1,))
    assert verigrad.certify(scale, {"x": "n", "c": 2.5}).status == "PROVED"

    @jax.custom_vjp
    def eps_norm(x, eps=1e-5):
        return x / jnp.sqrt(jnp.sum(x * x) + eps)
    eps_norm.defvjp(lambda x, eps=1e-5: (eps_norm(x, eps), (x, eps)),
                    lambda res, g: ((g - res[0] * jnp.sum(g * res[0]) / (jnp.sum(res[0] ** 2) + res[1]))
                                    / jnp.sqrt(jnp.sum(res[0] ** 2) + res[1]), None))
    cert = verigrad.certify(eps_norm, {"x": "n"})
    assert cert.status == "PROVED" and set(cert.wrt) == {"x"}


# -- custom_gradient, cumsum, pooling, constants ---------------------------------------------

def test_custom_gradient_functions():
    @jax.custom_gradient
    def softplus(x):
        return jnp.log1p(jnp.exp(x)), lambda g: (g * jax.nn.sigmoid(x),)

    @jax.custom_gradient
    def softplus_bad(x):
        return jnp.log1p(jnp.exp(x)), lambda g: (g * jax.nn.sigmoid(-x),)
    assert verigrad.certify(softplus, {"x": "n"}).status == "PROVED"
    assert verigrad.certify(softplus_bad, {"x": "n"}).status == "REFUTED"


def test_cumsum_and_its_reverse():
    right = vjp(lambda x: jnp.cumsum(x, -1), lambda res, g: (jax.lax.cumsum(g, 1, reverse=True),))
    wrong = vjp(lambda x: jnp.cumsum(x, -1), lambda res, g: (jnp.cumsum(g, -1),))
    assert verigrad.certify(right, {"x": "n, d"}).status == "PROVED"
    assert verigrad.certify(wrong, {"x": "n, d"}).status == "REFUTED"


def _pool(x):
    n, d = x.shape
    return jnp.max(x.reshape(n // 2, 2, d), axis=1)


def test_max_pooling_by_reshape_then_max():
    def bwd(res, g, every=False):
        (x,) = res
        n, d = x.shape
        xr = x.reshape(n // 2, 2, d)
        hit = jnp.ones_like(xr) if every else (xr == jnp.max(xr, axis=1, keepdims=True)).astype(x.dtype)
        return ((hit * g[:, None, :]).reshape(n, d),)
    cert = verigrad.certify(vjp(_pool, bwd), {"x": "2*n, d"})
    assert cert.status == "PROVED"
    assert any("3/2" in c for c in cert.side_conditions)          # one entry alone attains each max
    assert verigrad.certify(vjp(_pool, partial(bwd, every=True)), {"x": "2*n, d"}).status == "REFUTED"
    window = vjp(lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2, 1), (2, 1), "VALID"), bwd)
    assert verigrad.certify(window, {"x": "2*n, d"}).status == "PROVED"       # lax.reduce_window with max


CONFIDENCE = 1.0 - 0.1
LOW = (1.0 - CONFIDENCE) / 4          # 0.025000000000000005: read as 1/40


def _smoothed_xent(low):
    def targets(labels):
        return jax.nn.one_hot(labels, 5) * (CONFIDENCE - low) + low

    @jax.custom_vjp
    def f(logits, labels):
        return -jnp.sum(targets(labels) * jax.nn.log_softmax(logits, -1))
    f.defvjp(lambda lg, lb: (f(lg, lb), (lg, lb)),
             lambda res, g: (g * (jax.nn.softmax(res[0], -1) - targets(res[1])), None))
    return f


def test_float_constants_keep_the_programmers_identities():
    shapes = {"logits": "n, 5", "labels": "n:int32"}
    inside = "0 <= labels < 5"        # the backward's precondition: every label names a class
    assert verigrad.certify(_smoothed_xent(LOW), shapes, assume=inside).status == "PROVED"
    assert verigrad.certify(_smoothed_xent(0.02), shapes, assume=inside).status == "REFUTED"  # targets summing to 0.98


# -- permutations: argsort, gathers by data, scatter-add -------------------------------------------

def _sort_fwd(x):
    idx = jnp.argsort(x, -1)
    return jnp.take_along_axis(x, idx, -1), idx


def _route(x, s):
    return x[jnp.argsort(s)]


def test_route_by_argsort_is_proved_and_its_wrong_twins_refuted():
    """MoE route/unroute: the VJP of a gather by a permutation is the gather by its inverse,
    argsort(argsort(s)); the permutation itself, or a gather by integer data with repeats
    (whose VJP is a scatter-add), is refuted with a counterexample JAX confirms."""
    right = vjp(_route, lambda r, g: (g[jnp.argsort(jnp.argsort(r[1]))], jnp.zeros_like(r[1])))
    wrong = vjp(_route, lambda r, g: (g[jnp.argsort(r[1])], jnp.zeros_like(r[1])))
    shapes = {"x": "n", "s": "n"}
    cert = verigrad.certify(right, shapes)
    assert cert.status == "PROVED", cert.detail
    assert "argsort_inverse" in cert.axioms and "perm_bijection" in cert.axioms
    cert = verigrad.certify(wrong, shapes)
    assert cert.status == "REFUTED" and cert.wrt["x"].status == "REFUTED"
    genuine(cert, wrong, shapes, ["x", "s"])
    dup = vjp(lambda x, idx: x[idx], lambda r, g: (g[jnp.argsort(r[1])], None))
    cert = verigrad.certify(dup, {"x": "n", "idx": "n:int32"})
    assert cert.status == "REFUTED", cert.detail
    genuine(cert, dup, {"x": "n", "idx": "n:int32"}, ["x", "idx"])
    # JAX's own transpose of x[idx]: a scatter-add, which drops an index past the end where
    # the gather clamps it (JAX documents that its gradient is then wrong): refuted at such
    # an index, confirmed by the forward's finite difference
    scatter = vjp(lambda x, idx: x[idx], lambda r, g: (jnp.zeros_like(g).at[r[1]].add(g), None))
    cert = verigrad.certify(scatter, {"x": "n", "idx": "n:int32"})
    assert cert.status == "REFUTED", cert.detail
    ce = cert.counterexample
    x, idx, dy = (np.asarray(ce.inputs["x"], float), np.asarray(ce.inputs["idx"]), np.asarray(ce.cotangents["dy"]))
    n = len(x)
    assert not np.all((-n <= idx) & (idx < n))
    bump = np.eye(n)[tuple(ce.index)] * 1e-6
    with jax.enable_x64(True):
        fd = float(np.dot(dy, (np.asarray((x + bump)[idx.clip(-n, n - 1)]) - np.asarray((x - bump)[idx.clip(-n, n - 1)]))
                          / 2e-6))
    assert fd == pytest.approx(ce.expected, rel=1e-4, abs=1e-7) and abs(ce.got - ce.expected) > 1e-6
    clipped = vjp(lambda x, idx: x.at[idx].get(mode="clip"),
                  lambda r, g: (jnp.zeros_like(g).at[r[1]].add(g, mode="clip"), None))
    cert = verigrad.certify(clipped, {"x": "n", "idx": "n:int32"})
    assert cert.status == "PROVED", cert.detail


def _topk_route(tokens, experts):
    """Each token sent to its k chosen experts: the k*t slots sorted by expert, slot s
    holding token argsort(ravel(experts))[s] // k."""
    return tokens[jnp.argsort(jnp.ravel(experts)) // experts.shape[1]]


def _topk_unroute(g, experts):
    """The transpose: every slot's cotangent back to its token, summed over its k slots."""
    back = g[jnp.argsort(jnp.argsort(jnp.ravel(experts)))]
    return jnp.sum(back.reshape(experts.shape + g.shape[1:]), axis=1)


def test_top_k_route_is_proved():
    """Top-k routing (floor division of the argsort by k: the kernel's IntDiv): PROVED;
    unrouting with the permutation instead of its inverse is REFUTED."""
    right = vjp(_topk_route, lambda r, g: (_topk_unroute(g, r[1]), None))
    wrong = vjp(_topk_route, lambda r, g: (
        jnp.sum(g[jnp.argsort(jnp.ravel(r[1]))].reshape(r[1].shape + g.shape[1:]), axis=1), None))
    shapes = {"tokens": "t, d", "experts": "t, k:int32"}
    cert = verigrad.certify(right, shapes)
    assert cert.status == "PROVED", cert.detail
    assert "floor_div_eq" in cert.axioms
    cert = verigrad.certify(wrong, shapes)
    assert cert.status == "REFUTED"
    genuine(cert, wrong, shapes, ["tokens", "experts"])


def test_indices_assumed_a_permutation():
    """``--assume "permutation(idx)"``: the argument is reparametrized as the argsort of a
    free real vector, so the kernel knows it is a permutation; without the assumption the
    same backward is refuted by repeated indices."""
    inverse = vjp(lambda x, idx: x[idx], lambda r, g: (g[jnp.argsort(r[1])], None))
    scatter = vjp(lambda x, idx: x[idx], lambda r, g: (jnp.zeros_like(g).at[r[1]].add(g), None))
    wrong = vjp(lambda x, idx: x[idx], lambda r, g: (g[r[1]], None))
    shapes = {"x": "n, d", "idx": "n:int32"}
    for f in (inverse, scatter):
        cert = verigrad.certify(f, shapes, assume="permutation(idx)")
        assert cert.status == "PROVED", cert.detail
        assert any("assumes permutation(idx)" in c for c in cert.side_conditions)
    assert verigrad.certify(inverse, shapes).status == "REFUTED"
    cert = verigrad.certify(wrong, shapes, assume="permutation(idx)")
    assert cert.status == "REFUTED"
    assert sorted(cert.counterexample.inputs["idx"]) == list(range(cert.counterexample.sizes["n"]))
    with pytest.raises(verigrad.VerigradError, match="vector of integers"):
        verigrad.certify(inverse, shapes, assume="permutation(x)")


def test_segment_sum_by_scatter_add():
    """A scatter-add forward (segment sum by integer ids, repeats and ids past the end
    dropped); its VJP is the gather with fill 0, not the clamping gather."""
    seg = lambda x, idx: jnp.zeros(x.shape).at[idx].add(x)  # noqa: E731
    right = vjp(seg, lambda r, g: (g.at[r[1]].get(mode="fill", fill_value=0.0), None))
    clamped = vjp(seg, lambda r, g: (g[r[1]], None))
    shapes = {"x": "n", "idx": "n:int32"}
    assert verigrad.certify(right, shapes).status == "PROVED"
    cert = verigrad.certify(clamped, shapes)
    assert cert.status == "REFUTED"
    genuine(cert, clamped, shapes, ["x", "idx"])


def _per_expert(x, expert, w):
    return jnp.einsum("nd,ndm->nm", x, w[expert])


def _per_expert_bwd(r, dy):
    x, expert, w = r
    return (jnp.einsum("nm,ndm->nd", dy, w[expert]), None,
            jnp.zeros_like(w).at[expert].add(jnp.einsum("nd,nm->ndm", x, dy)))


def test_expert_ids_assumed_in_range():
    """``--assume "0 <= expert < k"``: each token through its expert's weight, ``w[expert]``;
    dw is the scatter-add over the ids. Past the end the gather clamps where the
    scatter-add drops (so dw is REFUTED without the assumption); in range it is PROVED."""
    f = vjp(_per_expert, _per_expert_bwd)
    shapes = {"x": "n, d", "expert": "n:int32", "w": "k, d, m"}
    cert = verigrad.certify(f, shapes)
    assert cert.status == "REFUTED" and cert.wrt["w"].status == "REFUTED"
    assert max(cert.counterexample.inputs["expert"]) >= cert.counterexample.sizes["k"] or \
        min(cert.counterexample.inputs["expert"]) < -cert.counterexample.sizes["k"]
    cert = verigrad.certify(f, shapes, assume="0 <= expert < k")
    assert cert.status == "PROVED", cert.detail
    assert any("assumes 0 <= expert < k" in c for c in cert.side_conditions)
    with pytest.raises(verigrad.VerigradError, match="array of integers"):
        verigrad.certify(f, shapes, assume="0 <= x < k")


def _top2(x):
    return jax.lax.top_k(x, 2)[0]


def _top2_bwd(swap):
    def bwd(r, g):
        idx = jax.lax.top_k(r[0], 2)[1]
        idx = idx[..., ::-1] if swap else idx
        return (jnp.sum(jax.nn.one_hot(idx, r[0].shape[-1]) * g[..., None], axis=-2),)
    return bwd


def test_top_k_values_backward():
    """``lax.top_k``: the first k of the stable argsort of -x; the VJP of its values puts
    each cotangent at its index (one_hot of the indices, or a scatter-add), off ties."""
    right, wrong = vjp(_top2, _top2_bwd(False)), vjp(_top2, _top2_bwd(True))
    scatter = vjp(_top2, lambda r, g: (jnp.zeros_like(r[0]).at[jnp.arange(r[0].shape[0])[:, None],
                                                              jax.lax.top_k(r[0], 2)[1]].add(g),))
    for f in (right, scatter):
        cert = verigrad.certify(f, {"x": "n, d+1"})
        assert cert.status == "PROVED", cert.detail
        assert any("Sum" in c for c in cert.side_conditions)         # off ties
    cert = verigrad.certify(wrong, {"x": "n, d+1"})
    assert cert.status == "REFUTED"
    genuine(cert, wrong, {"x": "n, d+1"}, ["x"])


def test_sort_activation_is_proved_off_ties():
    right = jax.custom_vjp(lambda x: jnp.sort(x, -1))
    right.defvjp(_sort_fwd, lambda idx, g: (jnp.take_along_axis(g, jnp.argsort(idx, -1), -1),))
    wrong = jax.custom_vjp(lambda x: jnp.sort(x, -1))
    wrong.defvjp(_sort_fwd, lambda idx, g: (jnp.take_along_axis(g, idx, -1),))
    cert = verigrad.certify(right, {"x": "n, d"})
    assert cert.status == "PROVED", cert.detail
    assert "deriv_argsort" in cert.axioms and any("Sum" in c for c in cert.side_conditions)
    cert = verigrad.certify(wrong, {"x": "n, d"})
    assert cert.status == "REFUTED"
    genuine(cert, wrong, {"x": "n, d"}, ["x"])


# -- code the importer refuses ------------------------------------------------------------------

def _lexsort(x):
    return jax.lax.sort((x, -x), num_keys=2)[0]


def test_refused_code_is_unknown_or_refuted_by_running_jax():
    right = jax.custom_vjp(_lexsort)
    right.defvjp(lambda x: (_lexsort(x), jnp.argsort(x, -1)),
                 lambda idx, g: (jnp.take_along_axis(g, jnp.argsort(idx, -1), -1),))
    wrong = jax.custom_vjp(_lexsort)
    wrong.defvjp(lambda x: (_lexsort(x), jnp.argsort(x, -1)), lambda idx, g: (jnp.take_along_axis(g, idx, -1),))
    cert = verigrad.certify(right, {"x": "n, d"}, search_seconds=3)
    assert cert.status == "UNKNOWN" and "not imported" in cert.detail and "2 keys" in cert.detail
    cert = verigrad.certify(wrong, {"x": "n, d"})
    assert cert.status == "REFUTED" and "refuted by running JAX" in cert.wrt["x"].detail
    genuine(cert, wrong, {"x": "n, d"}, ["x"])


# -- counterexamples, limits, the command line ------------------------------------------------

WRONG = '''
import jax
import jax.numpy as jnp

@jax.custom_vjp
def f(x, w):
    return jnp.tanh(x @ w)

f.defvjp(lambda x, w: (f(x, w), (x, w)),
         lambda r, g: ((g * (1 - jnp.tanh(r[0] @ r[1]) ** 2)) @ r[1].T, r[0].T @ g))
'''


def test_counterexample_is_saved_and_replays(tmp_path, capsys):
    src = tmp_path / "m.py"
    src.write_text(WRONG)
    npz = tmp_path / "ce.npz"
    args = ["certify", f"{src}:f", "--shape", "x=n,d", "--shape", "w=d,m", "--save-counterexample", str(npz)]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "x = [" in out and "dy = [" in out and "the backward returns" in out
    from verigrad.certify.certificate import load_counterexample
    ce = load_counterexample(str(npz))
    assert ce.argument == "w" and set(ce.inputs) == {"x", "w"} and ce.outputs == [0]
    assert main(args) == 1
    again = load_counterexample(str(npz))
    assert again.index == ce.index and again.got == ce.got      # the same command, the same counterexample
    x, w, dy = (np.asarray(ce.inputs["x"]), np.asarray(ce.inputs["w"]), np.asarray(ce.cotangents["dy"]))
    with jax.enable_x64(True):
        true = jax.vjp(lambda w_: jnp.tanh(x @ w_), w)[1](dy)[0]
    assert float(true[tuple(ce.index)]) == pytest.approx(ce.expected, rel=1e-5)


def test_several_targets_in_one_process(capsys):
    from certify_examples import EXAMPLES
    args = ["certify", f"{EXAMPLES / 'dense.py'}:dense", "--shape", "x=n,d", "--shape", "w=d,m", "--shape", "b=m",
            f"{EXAMPLES / 'straight_through.py'}:straight_through", "--shape", "z=n,d", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "PROVED" and [t["status"] for t in out["targets"]] == ["PROVED", "PROVED"]


def test_work_budget_gives_a_fast_unknown():
    f = vjp(lambda q, k: jax.nn.softmax(q @ k.T, -1),
            lambda res, g: (g @ res[1], g.T @ res[0]))          # wrong, and costly to decide
    t0 = time.perf_counter()
    cert = verigrad.certify(f, {"q": "n, d", "k": "n, d"}, budget=50, search_seconds=1)
    assert time.perf_counter() - t0 < 30
    assert cert.status in ("UNKNOWN", "REFUTED")
    assert any("budget" in (c.detail or "") for c in cert.claims() if c.status != "PROVED")


LOOP = "import jax\nwhile True:\n    pass\n"


def test_timeout_bounds_the_whole_run_including_the_import(tmp_path):
    f = tmp_path / "loop.py"
    f.write_text(LOOP)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "verigrad.cli", "certify", f"{f}:f", "--shape", "x=n", "--timeout", "5"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout.strip().splitlines()[-1] == "UNKNOWN"
    assert "Traceback" not in r.stderr and "timed out" in r.stdout
    assert time.perf_counter() - t0 < 12
