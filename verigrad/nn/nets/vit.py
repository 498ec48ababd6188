r"""The ViT for 8x8 digits, and its block with two drop-path sites (seed 003).

A pre-norm block, with per-example sites ``sA`` (on the attention branch, after the
out projection, before the first skip add) and ``sM`` (on the MLP branch, after fc2,
before the second):

.. math::
   h = x + s_A \odot \mathrm{mhsa}(\mathrm{LN}_1(x)), \qquad
   y = h + s_M \odot \mathrm{mlp}(\mathrm{LN}_2(h))

A site is one scalar per example (``(B,)``) or ``None`` (absent: no scaling). The
block exists twice, and the tests tie the two:

- ``vit_block``: composed from the combinators, two site residuals chained
  (``fwdOD_eq_sites``); its backward is the combinators' rule over the branches'
  VJPs.
- ``vit_block_flat``: the forward and backward as one flat let-chain each, as a
  renderer emits them: the backward recomputes the saves, feeds ``sM * dy`` into
  fc2's backward and ``sA * cotH`` into the out projection's, and hands the raw
  cotangents to both skips (``cotInD``).

``CONTROLS`` are the seed's deliberate bugs, for a certifier to refute.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from verigrad.nn import combinators as C
from verigrad.nn import layers as L
from verigrad.nn.layers.activations import GELU
from verigrad.nn.layers.core import AuxSpec, Layer, as_real, scale_examples

from .network import Network

SITES = ("sA", "sM")


def vit_block(x, heads, hidden, gelu: str = "tanh", eps: float = 1e-5, sites: bool = True) -> Layer:
    """The pre-norm block from the combinators: ``site_residual(LN1 ; mhsa, "sA")``
    then ``site_residual(LN2 ; mlp, "sM")``; with ``sites=False``, plain residuals
    (the drop-free block)."""
    ln1 = C.named("ln1", L.layer_norm(x, eps))
    attn = C.chain(ln1, C.named("attn", L.mhsa(x, heads)))
    ln2 = C.named("ln2", L.layer_norm(x, eps))
    mlp = C.chain(ln2, C.named("mlp", L.transformer_mlp(x, hidden, gelu)))
    if not sites:
        return C.chain(C.residual(attn), C.residual(mlp))
    return C.chain(C.site_residual(attn, "sA"), C.site_residual(mlp, "sM"))


# ---------------------------------------------------------------------------------
# The flat block: one let-chain forward, one let-chain backward.


def _ln(x, g, b, eps):
    """(LN(x), xhat, r): layer norm over the last axis, and its saves."""
    mu = jnp.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    r = lax.rsqrt(jnp.mean(xc * xc, axis=-1, keepdims=True) + eps)
    xhat = xc * r
    return xhat * g + b, xhat, r


def _rows(t, w):
    return lax.dot_general(t, w, (((2,), (0,)), ((), ())))


def _rows_t(t, w):
    return lax.dot_general(t, w, (((2,), (1,)), ((), ())))


def _outer(a, b):
    return lax.dot_general(a, b, (((0, 1), (0, 1)), ((), ())))


def block_forward(params, x, sA, sM, *, heads, eps=1e-5, gelu="tanh", control=None):
    """The block's forward as one let-chain. ``control="site_after_skip"`` is the
    seed's bug ``h = sA * (x + attn)``, ``y = sM * (h + mlp)``."""
    P, (f, _) = params, GELU[gelu]
    b, n, d = x.shape
    u, _, _ = _ln(x, P["ln1/g"], P["ln1/b"], eps)
    q = (_rows(u, P["attn/Wq"]) + P["attn/bq"]).reshape(b, n, heads, d // heads)
    k = (_rows(u, P["attn/Wk"]) + P["attn/bk"]).reshape(b, n, heads, d // heads)
    v = (_rows(u, P["attn/Wv"]) + P["attn/bv"]).reshape(b, n, heads, d // heads)
    s = jnp.einsum("bihe,bjhe->bhij", q, k) * lax.rsqrt(as_real(d // heads, x.dtype))
    e = jnp.exp(s - lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True)))
    p = e / jnp.sum(e, axis=-1, keepdims=True)
    a = jnp.einsum("bhij,bjhe->bihe", p, v).reshape(b, n, d)
    o = _rows(a, P["attn/Wo"]) + P["attn/bo"]
    h = scale_examples(sA, x + o) if control == "site_after_skip" else x + scale_examples(sA, o)
    z, _, _ = _ln(h, P["ln2/g"], P["ln2/b"], eps)
    m = _rows(z, P["mlp/fc1/W"]) + P["mlp/fc1/b"]
    fc2 = _rows(f(m), P["mlp/fc2/W"]) + P["mlp/fc2/b"]
    return scale_examples(sM, h + fc2) if control == "site_after_skip" else h + scale_examples(sM, fc2)


def block_backward(params, x, sA, sM, dy, *, heads, eps=1e-5, gelu="tanh", control=None):
    """The block's VJP as one let-chain: ``(dx, dparams)``.

    ``control`` injects one of the seed's backward bugs: ``"skip_reads_dropped"``
    (both skips read the site-scaled cotangent) or ``"fc2_weight_raw"`` (fc2's weight
    gradient reads the raw cotangent instead of ``sM * dy``).
    """
    P, (f, df) = params, GELU[gelu]
    b, n, d = x.shape
    hd = d // heads
    scale = lax.rsqrt(as_real(hd, x.dtype))
    # Recompute the saves.
    u, xh1, r1 = _ln(x, P["ln1/g"], P["ln1/b"], eps)
    q = (_rows(u, P["attn/Wq"]) + P["attn/bq"]).reshape(b, n, heads, hd)
    k = (_rows(u, P["attn/Wk"]) + P["attn/bk"]).reshape(b, n, heads, hd)
    v = (_rows(u, P["attn/Wv"]) + P["attn/bv"]).reshape(b, n, heads, hd)
    s = jnp.einsum("bihe,bjhe->bhij", q, k) * scale
    e = jnp.exp(s - lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True)))
    p = e / jnp.sum(e, axis=-1, keepdims=True)
    a = jnp.einsum("bhij,bjhe->bihe", p, v).reshape(b, n, d)
    o = _rows(a, P["attn/Wo"]) + P["attn/bo"]
    h = x + scale_examples(sA, o)
    z, xh2, r2 = _ln(h, P["ln2/g"], P["ln2/b"], eps)
    m = _rows(z, P["mlp/fc1/W"]) + P["mlp/fc1/b"]
    g = f(m)
    # The MLP branch reads sM * dy.
    dyM = scale_examples(sM, dy)
    dW2 = _outer(g, dy if control == "fc2_weight_raw" else dyM)
    db2 = jnp.sum(dyM, axis=(0, 1))
    dm = _rows_t(dyM, P["mlp/fc2/W"]) * df(m)
    dW1 = _outer(z, dm)
    db1 = jnp.sum(dm, axis=(0, 1))
    dz = _rows_t(dm, P["mlp/fc1/W"])
    dg2 = jnp.sum(dz * xh2, axis=(0, 1))
    db2n = jnp.sum(dz, axis=(0, 1))
    gz = dz * P["ln2/g"]
    dh_mlp = r2 * (gz - jnp.mean(gz, axis=-1, keepdims=True) - xh2 * jnp.mean(gz * xh2, axis=-1, keepdims=True))
    # The second skip reads the raw dy.
    cotH = (dyM if control == "skip_reads_dropped" else dy) + dh_mlp
    # The attention branch reads sA * cotH.
    dyA = scale_examples(sA, cotH)
    dWo = _outer(a, dyA)
    dbo = jnp.sum(dyA, axis=(0, 1))
    da = _rows_t(dyA, P["attn/Wo"]).reshape(b, n, heads, hd)
    dv = jnp.einsum("bhij,bihe->bjhe", p, da).reshape(b, n, d)
    dp = jnp.einsum("bihe,bjhe->bhij", da, v)
    ds = p * (dp - jnp.sum(dp * p, axis=-1, keepdims=True)) * scale
    dq = jnp.einsum("bhij,bjhe->bihe", ds, k).reshape(b, n, d)
    dk = jnp.einsum("bhij,bihe->bjhe", ds, q).reshape(b, n, d)
    du = _rows_t(dq, P["attn/Wq"]) + _rows_t(dk, P["attn/Wk"]) + _rows_t(dv, P["attn/Wv"])
    dg1 = jnp.sum(du * xh1, axis=(0, 1))
    db1n = jnp.sum(du, axis=(0, 1))
    gu = du * P["ln1/g"]
    dx_attn = r1 * (gu - jnp.mean(gu, axis=-1, keepdims=True) - xh1 * jnp.mean(gu * xh1, axis=-1, keepdims=True))
    # The first skip reads the raw cotH.
    dx = (dyA if control == "skip_reads_dropped" else cotH) + dx_attn
    grads = {"ln1/g": dg1, "ln1/b": db1n,
             "attn/Wq": _outer(u, dq), "attn/bq": jnp.sum(dq, axis=(0, 1)),
             "attn/Wk": _outer(u, dk), "attn/bk": jnp.sum(dk, axis=(0, 1)),
             "attn/Wv": _outer(u, dv), "attn/bv": jnp.sum(dv, axis=(0, 1)),
             "attn/Wo": dWo, "attn/bo": dbo,
             "ln2/g": dg2, "ln2/b": db2n,
             "mlp/fc1/W": dW1, "mlp/fc1/b": db1, "mlp/fc2/W": dW2, "mlp/fc2/b": db2}
    return dx, grads


CONTROLS = {
    "skip_reads_dropped": "the skips read the dropped cotangent (sM * dy, sA * cotH) instead of the raw one",
    "site_after_skip": "the sites applied after the skip adds: h = sA * (x + attn), y = sM * (h + mlp)",
    "fc2_weight_raw": "fc2's weight gradient reads the raw cotangent dy instead of sM * dy",
}


def vit_block_flat(x, heads, hidden, gelu: str = "tanh", eps: float = 1e-5, control=None) -> Layer:
    """The block as one flat forward and one flat backward, with the parameters and
    sites of ``vit_block`` (same names). ``control`` (a key of ``CONTROLS``) makes the
    seed's buggy variant: the forward for ``site_after_skip``, else the backward."""
    if control is not None and control not in CONTROLS:
        raise ValueError(f"unknown control {control!r}; expected one of {', '.join(CONTROLS)}")
    composed = vit_block(x, heads, hidden, gelu, eps)
    hyper = {"heads": heads, "eps": eps, "gelu": gelu}
    fwd_control = control if control == "site_after_skip" else None
    bwd_control = None if control == "site_after_skip" else control

    def forward(params, x, sA, sM):
        return block_forward(params, x, sA, sM, control=fwd_control, **hyper)

    def backward(params, x, sA, sM, dy):
        return block_backward(params, x, sA, sM, dy, control=bwd_control, **hyper)

    return Layer("vit_block_flat", tuple(x), tuple(x), forward, backward, composed.params,
                 tuple(AuxSpec(s, (x[0],), optional=True) for s in SITES),
                 hyper={**hyper, "hidden": hidden, "control": control},
                 doc="cotH = dy + mlp.back(h, sM dy); dx = cotH + attn.back(x, sA cotH)")


# ---------------------------------------------------------------------------------
# The network


def keep_ramp(depth: int, drop_path_rate: float) -> list:
    """Keep probability of each block: the drop rate rises linearly with the block
    index, from 0 at the first block to ``drop_path_rate`` at the last."""
    if depth == 1:
        return [1.0 - drop_path_rate]
    return [1.0 - drop_path_rate * i / (depth - 1) for i in range(depth)]


def vit(batch, width: int = 64, heads: int = 4, depth: int = 4, hidden: int = 128, patch: int = 2,
        drop_path_rate: float = 0.1, gelu: str = "tanh", eps: float = 1e-5, flat: bool = False,
        classes: int = 10) -> Network:
    """patch embedding (2x2 patches of the 8x8 digit, class token, positional
    embedding) -> ``depth`` pre-norm blocks, each with sites ``block{i}/sA`` and
    ``block{i}/sM`` -> final layer norm -> the class token -> dense head.
    ``flat=True`` uses the flat-chain block (the same function, the renderer's
    spelling) instead of the composed one."""
    embed = L.patch_embed((batch, 8, 8, 1), patch, width)
    block = vit_block_flat if flat else vit_block
    parts, keep = [C.named("embed", embed)], {}
    for i, kp in enumerate(keep_ramp(depth, drop_path_rate)):
        parts.append(C.named(f"block{i}", block(embed.y, heads, hidden, gelu, eps)))
        keep.update({f"block{i}/{s}": kp for s in SITES})
    token = L.take_token(embed.y)
    parts += [C.named("ln", L.layer_norm(embed.y, eps)), token, C.named("head", L.dense(token.y, classes))]
    return Network("vit", C.chain(*parts), keep=keep, classes=classes)
