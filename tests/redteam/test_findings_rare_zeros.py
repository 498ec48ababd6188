"""Red team RT-28 (fixed): a ``u != 0`` side condition (off an indicator's kink, a nonzero
base) was accepted when ``u`` is real-analytic and, by draws, "not identically zero"; but
draws run only at the sampled sizes (n = 1, 2, 3, 5, ...), and PROVED is a claim for every
size. The same gap RT-24 closed for a maximum's ties (``conditions.ties_null``):

    u(b) = (b - 40)(b - 41) x[b]             (identically 0 at b = 40, 41: from n = 42)
    fwd(x)[b] = x[b] [u(b) >= 0]
    bwd(x, g)[b] = g[b] [u(b) > 0]           (the same off the kink u = 0)

    $ verigrad certify f.py:f --shape x=n      -> PROVED (side condition: u != 0 off the kink)

At n >= 42, entries 40 and 41 have ``u = 0`` at every input, so the forward is ``x[b]``
there and its derivative is 1 (JAX's VJP and a central difference agree); the custom
backward gives 0, at every input. Now ``u`` is shown not identically zero symbolically,
for every size and every entry (``conditions.nonzero_null``): its normal form, or a partial
derivative in an input entry it reads, is one integer polynomial in indices and sizes that
the size oracle shows nonzero times input entries and positive atoms; else UNKNOWN. Here the
partial in ``x[b]`` is ``(b - 40)(b - 41)``, not shown nonzero, so it is refused.

An argsort's condition (the entries pairwise distinct, ``n + 1/2 - #{(c, d): s_c = s_d} > 0``)
had the same gap: keys ``(b - 40)(b - 41) x[b]`` tie identically from n = 42, and the draws
never saw it. (The backward there is still right: identically tied keys keep a stable sort's
order locally constant; but the certificate rested on a condition that fails at every input
at those sizes.) Its pairs ``s_c - s_d`` are now shown apart by ``ties_null``.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _kinked(k):
    def u(x):
        b = jnp.arange(x.shape[0]).astype(x.dtype)
        return (b - k) * (b - k - 1.0) * x

    def fwd(x):
        return x * (u(x) >= 0).astype(x.dtype)

    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), x), lambda x, g: (g * (u(x) > 0).astype(x.dtype),))
    return f


def test_rt28_the_backward_is_wrong_at_every_input_from_n_42():
    f = _kinked(40.0)
    rng = np.random.default_rng(0)
    with jax.enable_x64(True):
        for _ in range(3):
            x = jnp.asarray(rng.normal(size=50))
            got = np.asarray(jax.vjp(f, x)[1](jnp.ones(50))[0])
            want = np.asarray(jax.vjp(f.fun, x)[1](jnp.ones(50))[0])
            fd = [float((f.fun(x.at[j].add(1e-6))[j] - f.fun(x.at[j].add(-1e-6))[j]) / 2e-6) for j in (40, 41)]
            assert list(got[40:42]) == [0.0, 0.0] and list(want[40:42]) == [1.0, 1.0]
            assert np.allclose(fd, 1.0)


def test_rt28_not_proved():
    cert = verigrad.certify(_kinked(40.0), shapes={"x": "n"})
    assert cert.status == "UNKNOWN", cert.side_conditions
    assert "identically zero at some entry, at some size" in cert.detail, cert.detail


def test_rt28_a_relu_like_twin_is_refused():
    """``maximum(u, 0)`` in the forward, the backward through ``[u > 0]``: right here (at
    b = 40, 41 both sides are 0), but the certificate rested on ``u != 0``, false at every
    input at those entries from n = 42, so it is not PROVED either."""
    def u(x):
        b = jnp.arange(x.shape[0]).astype(x.dtype)
        return (b - 40.0) * (b - 41.0) * x

    def fwd(x):
        return jnp.maximum(u(x), 0.0)

    def bwd(x, g):
        b = jnp.arange(x.shape[0]).astype(x.dtype)
        return (g * jnp.where(u(x) > 0, (b - 40.0) * (b - 41.0), 0.0),)

    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), x), bwd)
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status != "PROVED", cert.side_conditions


def test_rt28_a_kink_zero_only_at_sampled_sizes_stays_refused():
    """(b - 1)(b - 2) x[b]: identically 0 at b = 1, 2, from n = 3 (refused before, by draws)."""
    assert verigrad.certify(_kinked(1.0), shapes={"x": "n"}).status != "PROVED"


def test_rt28_relu_abs_max_keep_their_proofs():
    relu = jax.custom_vjp(lambda x: jnp.maximum(x, 0.0))
    relu.defvjp(lambda x: (jnp.maximum(x, 0.0), x), lambda x, g: (g * (x > 0).astype(x.dtype),))
    assert verigrad.certify(relu, shapes={"x": "n"}).status == "PROVED"

    ab = jax.custom_vjp(lambda x: jnp.abs(x))
    ab.defvjp(lambda x: (jnp.abs(x), x), lambda x, g: (g * jnp.sign(x),))
    assert verigrad.certify(ab, shapes={"x": "n, d"}).status == "PROVED"

    mx = jax.custom_vjp(lambda x, y: jnp.maximum(x, y))
    mx.defvjp(lambda x, y: (jnp.maximum(x, y), (x, y)),
              lambda r, g: (g * (r[0] > r[1]).astype(g.dtype), g * (r[0] <= r[1]).astype(g.dtype)))
    assert verigrad.certify(mx, shapes={"x": "n", "y": "n"}).status == "PROVED"


def test_rt28_a_weighted_kink_nonzero_everywhere_keeps_its_proof():
    """(b + 1) x[b]: the partial in x[b] is b + 1, nonzero at every b; a dense layer's relu:
    the partial of (x W)[i, k] in x[i, e] is W[e, k]."""
    f = _kinked(-1.0)          # u = (b + 1)(b) x[b]: 0 at b = 0, identically
    assert verigrad.certify(f, shapes={"x": "n"}).status != "PROVED"

    def u(x):
        return (jnp.arange(x.shape[0]).astype(x.dtype) + 1.0) * x

    g = jax.custom_vjp(lambda x: x * (u(x) >= 0).astype(x.dtype))
    g.defvjp(lambda x: (x * (u(x) >= 0).astype(x.dtype), x), lambda x, d: (d * (u(x) > 0).astype(x.dtype),))
    assert verigrad.certify(g, shapes={"x": "n"}).status == "PROVED"

    def dense(x, w):
        return jax.nn.relu(x @ w)

    def bwd(r, d):
        x, w = r
        h = d * (x @ w > 0).astype(x.dtype)
        return h @ w.T, x.T @ h

    dn = jax.custom_vjp(dense)
    dn.defvjp(lambda x, w: (dense(x, w), (x, w)), bwd)
    assert verigrad.certify(dn, shapes={"x": "n, d", "w": "d, m"}).status == "PROVED"


def _sorted_by(weight):
    def keys(x):
        return weight(jnp.arange(x.shape[0]).astype(x.dtype)) * x

    def fwd(x):
        return x[jnp.argsort(keys(x))]

    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), x), lambda x, g: (g[jnp.argsort(jnp.argsort(keys(x)))],))
    return f


def test_rt28_argsort_keys_tied_from_n_42_are_refused():
    cert = verigrad.certify(_sorted_by(lambda b: (b - 40.0) * (b - 41.0)), shapes={"x": "n"})
    assert cert.status == "UNKNOWN", cert.side_conditions
    assert "(pairwise distinct entries)" in cert.detail and "agree identically, at some size" in cert.detail


def test_rt28_argsort_keys_apart_keep_their_proof():
    assert verigrad.certify(_sorted_by(lambda b: b + 1.0), shapes={"x": "n"}).status == "PROVED"
    assert verigrad.certify(_sorted_by(lambda b: 1.0 + 0 * b), shapes={"x": "n"}).status == "PROVED"
