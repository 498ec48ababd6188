"""Hand-written backwards that need the kernel's piecewise rules (issue 12,
notes/kernel-requests/real-world.md items 3, 4, 5, 7): PROVED when correct, never PROVED
when wrong (a dropped term, a shifted clip bound, a wrong denominator, ties of integer
scores treated as a unique maximum)."""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def vjp(fwd, bwd):
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda *a: (fwd(*a), a), bwd)
    return f


def _lae(a, b):
    return jnp.maximum(a, b) + jnp.log1p(jnp.exp(-jnp.abs(a - b)))


def test_logaddexp_with_max_and_abs():
    good = vjp(_lae, lambda r, g: (g * jax.nn.sigmoid(r[0] - r[1]), g * jax.nn.sigmoid(r[1] - r[0])))
    cert = verigrad.certify(good, {"a": "n", "b": "n"})
    assert cert.status == "PROVED", cert.detail
    assert "indicator_split" in cert.axioms
    bad = vjp(_lae, lambda r, g: (g * jax.nn.sigmoid(r[0] - r[1]), g * jax.nn.sigmoid(r[0] - r[1])))
    assert verigrad.certify(bad, {"a": "n", "b": "n"}).status == "REFUTED"


def _huber(p, t):
    d = p - t
    a = jnp.abs(d)
    return jnp.sum(jnp.where(a <= 1.0, 0.5 * d * d, a - 0.5))


def test_huber_backward_is_the_clip():
    good = vjp(_huber, lambda r, g: (g * jnp.clip(r[0] - r[1], -1.0, 1.0), -g * jnp.clip(r[0] - r[1], -1.0, 1.0)))
    cert = verigrad.certify(good, {"p": "n", "t": "n"})
    assert cert.status == "PROVED", cert.detail
    assert "indicator_order" in cert.axioms
    shifted = vjp(_huber, lambda r, g: (g * jnp.clip(r[0] - r[1], -1.0, 2.0), -g * jnp.clip(r[0] - r[1], -1.0, 2.0)))
    assert verigrad.certify(shifted, {"p": "n", "t": "n"}).status == "REFUTED"


def _smoothed(labels, k, den):
    low = 0.1 / den
    return jax.nn.one_hot(labels, k) * (0.9 - low) + low


def _xent(fwd_den, bwd_den):
    def fwd(logits, labels):
        k = logits.shape[-1]
        return -jnp.sum(_smoothed(labels, k, fwd_den(k)) * jax.nn.log_softmax(logits, -1))

    def bwd(res, g):
        logits, labels = res
        k = logits.shape[-1]
        return g * (jax.nn.softmax(logits, -1) - _smoothed(labels, k, bwd_den(k))), None
    return vjp(fwd, bwd)


def test_label_smoothing_over_a_symbolic_vocabulary():
    """(1 - confidence) / (k - 1) with k >= 2: the size k - 1 is a positive denominator.
    The backward is right for labels in [0, k) only: with that precondition stated it is
    PROVED, without it REFUTED at a label outside (its one-hot row is 0)."""
    shapes = {"logits": "n, k", "labels": "n:int32"}
    inside = "0 <= labels < k"
    cert = verigrad.certify(_xent(lambda k: k - 1, lambda k: k - 1), shapes, minimum={"k": 2}, assume=inside)
    assert cert.status == "PROVED", cert.detail
    wrong = verigrad.certify(_xent(lambda k: k - 1, lambda k: k), shapes, minimum={"k": 2}, assume=inside)
    assert wrong.status == "REFUTED"                                                        # a wrong denominator
    unstated = verigrad.certify(_xent(lambda k: k - 1, lambda k: k - 1), shapes, minimum={"k": 2})
    assert unstated.status == "REFUTED"
    ce = unstated.counterexample
    assert not np.all((ce.inputs["labels"] >= 0) & (ce.inputs["labels"] < ce.sizes["k"])), ce


def test_top1_gate_and_one_hot_argmax_under_a_unique_maximum():
    def gate(logits):
        p = jax.nn.softmax(logits, -1)
        return jnp.sum(p * jax.nn.one_hot(jnp.argmax(logits, -1), logits.shape[-1]), -1)

    def gate_bwd(res, g):
        (logits,) = res
        p = jax.nn.softmax(logits, -1)
        choice = jax.nn.one_hot(jnp.argmax(logits, -1), logits.shape[-1])
        gate_ = jnp.sum(p * choice, -1, keepdims=True)
        return (g[:, None] * gate_ * (choice - p),)
    cert = verigrad.certify(vjp(gate, gate_bwd), {"logits": "n, e"})
    assert cert.status == "PROVED", cert.detail
    assert any("3/2" in c for c in cert.side_conditions)          # off ties, stated

    def rowmax_bwd(res, g):
        (x,) = res
        return (g[..., None] * jax.nn.one_hot(jnp.argmax(x, -1), x.shape[-1]),)
    assert verigrad.certify(vjp(lambda x: jnp.max(x, -1), rowmax_bwd), {"x": "n, d"}).status == "PROVED"

    def last_bwd(res, g):        # the last index attaining the max: wrong only at ties
        (x,) = res
        d = x.shape[-1]
        return (g[..., None] * jax.nn.one_hot(d - 1 - jnp.argmax(x[..., ::-1], -1), d),)
    cert = verigrad.certify(vjp(lambda x: jnp.max(x, -1), last_bwd), {"x": "n, d"})
    # correct off ties (of measure zero), where the last index attaining the max is the
    # first: never REFUTED (the reversed index needs item 9's reflection to be PROVED)
    assert cert.status in ("PROVED", "UNKNOWN")


def test_ties_of_integer_scores_are_not_a_unique_maximum():
    """x summed where the integer score s is maximal; the backward gives the cotangent to
    the first maximal index only: wrong wherever s has ties, which integer data has."""
    def pick(x, s):
        return jnp.sum(x * (s == jnp.max(s)))

    def bwd(res, g):
        x, s = res
        return g * jax.nn.one_hot(jnp.argmax(s), s.shape[0]), None
    cert = verigrad.certify(vjp(pick, bwd), {"x": "n", "s": "n:int32"})
    assert cert.status == "REFUTED"
    real = verigrad.certify(vjp(pick, bwd), {"x": "n", "s": "n"})      # real scores: ties of measure zero
    assert real.status == "PROVED" and any("3/2" in c for c in real.side_conditions)


def _swiglu(x, wg, wu, wd):
    return (jax.nn.silu(x @ wg) * (x @ wu)) @ wd


def _swiglu_bwd(exact):
    def bwd(res, dy):
        x, wg, wu, wd = res
        g, u = x @ wg, x @ wu
        sg = jax.nn.sigmoid(g)
        dh = dy @ wd.T
        du = dh * g * sg
        dg = dh * u * sg * ((1 + g * (1 - sg)) if exact else 1)      # the wrong one drops silu's second term
        return dg @ wg.T + du @ wu.T, x.T @ dg, x.T @ du, (g * sg * u).T @ dy
    return bwd


def test_swiglu_fused_backward():
    """silu's derivative summed over the hidden units (item 10: positive denominators inside a sum)."""
    shapes = {"x": "n, k", "wg": "k, f", "wu": "k, f", "wd": "f, k"}
    cert = verigrad.certify(vjp(_swiglu, _swiglu_bwd(True)), shapes)
    assert cert.status == "PROVED", cert.detail
    assert verigrad.certify(vjp(_swiglu, _swiglu_bwd(False)), shapes).status == "REFUTED"
