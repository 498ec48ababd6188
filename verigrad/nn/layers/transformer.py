r"""Transformer layers: multi-head self-attention, the transformer MLP, patch embedding.

Multi-head attention keeps the heads as column slabs: with head dimension ``e``,
feature ``h e + j`` of ``Q = x W_q + b_q`` is coordinate ``j`` of head ``h``. Per head,
:math:`P = \mathrm{softmax}(Q_h K_h^\top / \sqrt{e})`, :math:`A_h = P V_h`, and the
heads side by side go through the out projection. Its VJP, per head, with
:math:`dA` the cotangent of the heads' output:

.. math::
   dV = P^\top dA,\quad dP = dA\,V^\top,\quad
   dS = P \odot (dP - \mathrm{rowsum}(dP \odot P)) / \sqrt{e},\quad
   dQ = dS\,K,\quad dK = dS^\top Q

and the three projections' dense VJPs fan in to ``dx``.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from .activations import GELU
from .conv import axis, conv, conv_input_vjp, conv_kernel_vjp
from .core import (Layer, ParamSpec, as_real, contract_leading, expect_rank, glorot_uniform,
                   matmul_last, matmul_last_t, normal, shape_str, sum_leading, zeros)
from .logits import softmax_rows, softmax_vjp

PROJECTIONS = ("q", "k", "v")


def split_heads(t, heads):
    """``(B, n, H e) -> (B, n, H, e)``: head ``h`` is the column slab ``[h e, (h+1) e)``."""
    b, n, d = t.shape
    return t.reshape(b, n, heads, d // heads)


def merge_heads(t):
    b, n, h, e = t.shape
    return t.reshape(b, n, h * e)


def attention_saves(params, x, heads):
    """What the backward needs from the forward: the heads' ``Q, K, V``, the attention
    weights ``P`` and the merged heads' output ``A``."""
    q, k, v = (split_heads(matmul_last(x, params[f"W{c}"]) + params[f"b{c}"], heads) for c in PROJECTIONS)
    scale = lax.rsqrt(as_real(q.shape[3], x.dtype))
    p = softmax_rows(jnp.einsum("bihe,bjhe->bhij", q, k) * scale)
    a = merge_heads(jnp.einsum("bhij,bjhe->bihe", p, v))
    return q, k, v, p, a


def sdpa_vjp(q, k, v, p, da):
    """``(dQ, dK, dV)`` of scaled dot-product attention per head, for ``da: (B, n, H, e)``."""
    dv = jnp.einsum("bhij,bihe->bjhe", p, da)
    dp = jnp.einsum("bihe,bjhe->bhij", da, v)
    ds = softmax_vjp(p, dp) * lax.rsqrt(as_real(q.shape[3], q.dtype))
    dq = jnp.einsum("bhij,bjhe->bihe", ds, k)
    dk = jnp.einsum("bhij,bihe->bjhe", ds, q)
    return dq, dk, dv


def mhsa_backward(heads, sdpa_back=sdpa_vjp):
    """The backward of ``mhsa``: out projection, attention per head (``sdpa_back``),
    then the q, k, v projections fanning in to ``dx``."""
    def backward(params, x, dy):
        q, k, v, p, a = attention_saves(params, x, heads)
        grads = {"Wo": contract_leading(a, dy), "bo": sum_leading(dy, 1)}
        cots = sdpa_back(q, k, v, p, split_heads(matmul_last_t(dy, params["Wo"]), heads))
        dx = None
        for c, dt in zip(PROJECTIONS, map(merge_heads, cots)):
            grads[f"W{c}"], grads[f"b{c}"] = contract_leading(x, dt), sum_leading(dt, 1)
            part = matmul_last_t(dt, params[f"W{c}"])
            dx = part if dx is None else dx + part
        return dx, grads
    return backward


def mhsa(x, heads) -> Layer:
    """Multi-head self-attention with the out projection, ``x: (B, n, D)``,
    ``D = heads * e``; parameters ``W{q,k,v,o}: (D, D)`` and ``b{q,k,v,o}: (D,)``."""
    expect_rank("mhsa", x, 3, "batch, tokens, features")
    d = x[2]
    if not bool(heads * (d // heads) == d):
        raise ValueError(f"mhsa: width {d} of input {shape_str(x)} is not {heads} heads times a "
                         f"head dimension (declare it as {heads}*e)")

    def forward(params, x):
        *_, a = attention_saves(params, x, heads)
        return matmul_last(a, params["Wo"]) + params["bo"]

    params = tuple(spec for c in PROJECTIONS + ("o",) for spec in (
        ParamSpec(f"W{c}", (d, d), glorot_uniform(), decay=True), ParamSpec(f"b{c}", (d,), zeros())))
    return Layer("mhsa", tuple(x), tuple(x), forward, mhsa_backward(heads), params, hyper={"heads": heads},
                 doc="dV = P^T dA, dP = dA V^T, dS = softmax_vjp(P, dP)/sqrt(e), dQ = dS K, dK = dS^T Q")


def transformer_mlp(x, hidden, gelu: str = "tanh") -> Layer:
    r"""``fc2(gelu(fc1(x)))`` over the last axis, ``fc1: D -> hidden``, ``fc2: hidden -> D``.
    Backward: :math:`dg = dy\,W_2^\top`, :math:`dm = dg\,\mathrm{gelu}'(m)`,
    :math:`dx = dm\,W_1^\top`; :math:`dW_2 = g^\top dy`, :math:`dW_1 = x^\top dm`."""
    if gelu not in GELU:
        raise ValueError(f"unknown GELU form {gelu!r}; expected 'tanh' or 'erf'")
    f, df = GELU[gelu]
    d = x[-1]

    def forward(params, x):
        return matmul_last(f(matmul_last(x, params["fc1/W"]) + params["fc1/b"]), params["fc2/W"]) + params["fc2/b"]

    def backward(params, x, dy):
        m = matmul_last(x, params["fc1/W"]) + params["fc1/b"]
        dm = matmul_last_t(dy, params["fc2/W"]) * df(m)
        grads = {"fc2/W": contract_leading(f(m), dy), "fc2/b": sum_leading(dy, 1),
                 "fc1/W": contract_leading(x, dm), "fc1/b": sum_leading(dm, 1)}
        return matmul_last_t(dm, params["fc1/W"]), grads

    return Layer("transformer_mlp", tuple(x), tuple(x), forward, backward,
                 params=(ParamSpec("fc1/W", (d, hidden), glorot_uniform(), decay=True),
                         ParamSpec("fc1/b", (hidden,), zeros()),
                         ParamSpec("fc2/W", (hidden, d), glorot_uniform(), decay=True),
                         ParamSpec("fc2/b", (d,), zeros())),
                 hyper={"hidden": hidden, "gelu": gelu},
                 doc="dm = (dy W2^T) gelu'(m); dx = dm W1^T; dW2 = gelu(m)^T dy; dW1 = x^T dm")


def patch_embed(x, patch: int, width) -> Layer:
    """Image ``(B, p h, p w, c)`` to tokens ``(B, 1 + h w, width)``: each ``p x p`` patch
    linearly embedded (a stride-``p`` VALID convolution ``W: (p, p, c, width)`` plus
    ``b``), a learned class token ``cls`` in front, a learned positional embedding
    ``pos: (1 + h w, width)`` added. Backward: ``dpos = sum_b dy``,
    ``dcls = sum_b dy[:, 0]``, and the convolution's VJP for the patch tokens."""
    expect_rank("patch_embed", x, 4, "NHWC")
    try:
        ah, aw = axis(x[1], patch, patch, "VALID"), axis(x[2], patch, patch, "VALID")
        if ah.rest or aw.rest:
            raise ValueError(f"spatial sizes are not multiples of the patch size {patch}")
    except ValueError as e:
        raise ValueError(f"patch_embed at input {shape_str(x)}: {e}") from None
    tokens = 1 + ah.out * aw.out

    def forward(params, x):
        t = conv(x, params["W"], ah, aw) + params["b"]
        b, h, w, d = t.shape
        cls = lax.broadcast_in_dim(params["cls"], (b, 1, d), (2,))
        return jnp.concatenate([cls, t.reshape(b, h * w, d)], axis=1) + params["pos"]

    def backward(params, x, dy):
        b, n, d = dy.shape
        dt = lax.slice(dy, (0, 1, 0), (b, n, d)).reshape(b, x.shape[1] // patch, x.shape[2] // patch, d)
        grads = {"W": conv_kernel_vjp(x, dt, ah, aw), "b": sum_leading(dt, 1),
                 "cls": sum_leading(lax.slice(dy, (0, 0, 0), (b, 1, d)), 1), "pos": jnp.sum(dy, axis=0)}
        return conv_input_vjp(dt, params["W"], ah, aw), grads

    return Layer("patch_embed", tuple(x), (x[0], tokens, width), forward, backward,
                 params=(ParamSpec("W", (patch, patch, x[3], width), glorot_uniform(), decay=True),
                         ParamSpec("b", (width,), zeros()),
                         ParamSpec("cls", (width,), normal(0.02)),
                         ParamSpec("pos", (tokens, width), normal(0.02))),
                 hyper={"patch": patch},
                 doc="dpos = sum_b dy; dcls = sum_b dy[:, 0]; conv VJP for the patches")
