"""The log-sum-exp of a -inf mask as a residual (flash and splash attention backwards read
``p = exp(s - lse)`` with ``lse = m + log l`` saved by the forward).

``l = sum_j exp(s_j - m)`` is a sum of entries that are 0 exactly where ``s`` is -inf
and positive elsewhere; where every row has an entry that is not -inf (a witness index
such as a causal mask's diagonal, or ``--assume "any(mask, -1)"``) the sum is positive,
so ``log l`` is finite and ``lse`` is finite (``Facts.make_zero``,
``jaxpr_rules._sum_positive``). Then ``s - lse`` is -inf exactly where the mask is, and
``exp`` of it is modelled exactly. Without such a fact ``l`` may be 0 (a row masked
throughout) and the import is refused, as before."""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad

SHAPES = {"s": "n, k", "mask": "n, k:bool"}


def _lse(s, mask):
    s = jnp.where(mask, s, -jnp.inf)
    m = jnp.max(s, -1)
    return m + jnp.log(jnp.sum(jnp.exp(s - m[:, None]), -1))


def _custom(bwd):
    f = jax.custom_vjp(_lse)
    f.defvjp(lambda s, mask: (_lse(s, mask), (s, mask, _lse(s, mask))), bwd)
    return f


def _from_residual(res, g):          # right: p = exp(s - lse) on the mask, 0 off it
    s, mask, lse = res
    return g[:, None] * jnp.exp(jnp.where(mask, s, -jnp.inf) - lse[:, None]), None


def _mask_forgotten(res, g):         # wrong: exp(s - lse) on every entry
    s, mask, lse = res
    return g[:, None] * jnp.exp(s - lse[:, None]), None


def _doubled(res, g):                # wrong: twice the derivative
    s, mask, lse = res
    return 2 * g[:, None] * jnp.exp(jnp.where(mask, s, -jnp.inf) - lse[:, None]), None


def _genuine(cert, f):
    cx = cert.counterexample
    assert np.all(np.any(np.asarray(cx.inputs["mask"]), -1)), "the counterexample satisfies the assumption"
    with jax.enable_x64(True):
        s, mask = jnp.asarray(cx.inputs["s"]), jnp.asarray(cx.inputs["mask"])
        g = jnp.asarray(cx.cotangents["dy"])
        want = jax.vjp(lambda s: f.fun(s, mask), s)[1](g)[0]
        got = jax.vjp(lambda s: f(s, mask), s)[1](g)[0]
    idx = tuple(cx.index)
    assert abs(float(want[idx]) - float(got[idx])) > 1e-6


def test_the_residual_is_imported_when_rows_are_alive():
    cert = verigrad.certify(_custom(_from_residual), SHAPES, assume=["any(mask, -1)"], search_seconds=2)
    assert "not imported" not in cert.detail, cert.detail
    assert cert.validation.startswith("agrees with JAX"), cert.validation
    assert cert.status != "REFUTED", cert.counterexample


def test_wrong_backwards_from_the_residual_are_refuted():
    for bwd in (_mask_forgotten, _doubled):
        f = _custom(bwd)
        cert = verigrad.certify(f, SHAPES, assume=["any(mask, -1)"])
        assert cert.status == "REFUTED", (bwd.__name__, cert.detail)
        assert cert.validation.startswith("agrees with JAX"), cert.validation      # refuted on the import
        _genuine(cert, f)


def test_without_the_assumption_a_row_may_be_masked_throughout():
    cert = verigrad.certify(_custom(_from_residual), SHAPES, search_seconds=2)
    assert cert.status != "PROVED" and "any(mask, -1)" in cert.detail, cert.detail
    # alive along the other axis says nothing of a row along -1
    cert = verigrad.certify(_custom(_from_residual), SHAPES, assume=["any(mask, 0)"], search_seconds=2)
    assert cert.status != "PROVED" and "not imported" in cert.detail, cert.detail


def _log_facts(fn):
    """The importer's facts of each ``log``'s operand (its sign) and result (its risk) in
    ``fn`` (under ``any(mask, -1)``)."""
    from verigrad.frontends import jaxpr_rules as R
    seen = []
    log = R.RULES["log"]

    def spy(ctx, eqn, x):
        out = log(ctx, eqn, x)
        seen.append((R.facts(ctx, x).sign, R.facts(ctx, out).risk))
        return out
    R.RULES["log"] = spy
    try:
        verigrad.certify(fn, SHAPES, assume=["any(mask, -1)"], search_seconds=0.5, timeout=30)
    finally:
        R.RULES["log"] = log
    return seen


def _log_of_column_sums(s, mask):     # rows alive along -1, but a column may be masked throughout
    t = jnp.where(mask, s, -jnp.inf)
    p = jnp.exp(t - jnp.max(t, -1, keepdims=True))
    return jnp.log(jnp.sum(p, 0)) + jnp.log(jnp.sum(p, 1))[0]


def test_the_masked_sum_is_positive_only_along_live_rows():
    from verigrad.frontends.jaxpr_rules import FINITE, INF
    assert _log_facts(_custom(_from_residual))[0] == ("pos", FINITE)
    f = jax.custom_vjp(_log_of_column_sums)
    f.defvjp(lambda s, mask: (_log_of_column_sums(s, mask), jnp.zeros_like(s)), lambda res, g: (res, None))
    assert _log_facts(f)[:2] == [("nonneg", INF), ("pos", FINITE)]


# -- a witness: the diagonal of a causal mask ---------------------------------------------------

def _causal_lse(s):
    n = s.shape[0]
    keep = jnp.arange(n)[None, :] <= jnp.arange(n)[:, None]
    t = jnp.where(keep, s, -jnp.inf)
    m = jnp.max(t, -1)
    return m + jnp.log(jnp.sum(jnp.exp(t - m[:, None]), -1)), t


def _causal(bwd):
    f = jax.custom_vjp(lambda s: _causal_lse(s)[0])
    f.defvjp(lambda s: (_causal_lse(s)[0], _causal_lse(s)), bwd)
    return f


def test_a_causal_mask_keeps_its_rows_alive_without_an_assumption():
    right = _causal(lambda res, g: (g[:, None] * jnp.exp(res[1] - res[0][:, None]),))
    cert = verigrad.certify(right, {"s": "n, n"}, search_seconds=2)
    assert "not imported" not in cert.detail and cert.status != "REFUTED", cert.detail
    wrong = _causal(lambda res, g: (g[:, None] * jnp.exp(res[1] - res[0][:, None]) * 0.5,))
    assert verigrad.certify(wrong, {"s": "n, n"}).status == "REFUTED"
