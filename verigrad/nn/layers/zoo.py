"""The zoo as a table: each layer with its size symbols, two concrete examples, and a
control, a realistic bug in its backward that a certifier must refute.

``ZOO[name].symbolic()`` builds the layer at symbolic sizes (``jax.export`` dims,
each >= 1), which is what the certificate quantifies over; a shape constraint (an
even image for a stride-2 pool) is built into how the input is declared (``2*h``).
``ZOO[name].control(...)`` is the same layer with the buggy backward.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
from jax import lax

from . import activations as A
from . import affine as D, conv as C, drop as R, norms as N, pool as P, shape as S
from . import logits as SM, transformer as T
from .core import Layer, contract_leading, matmul_last, sum_leading
from .norms import standardize
from .pool import place
from .logits import softmax_rows
from .transformer import mhsa_backward, sdpa_vjp


@dataclass(frozen=True)
class Entry:
    name: str
    sizes: str                          # the size symbols, e.g. "B d m"
    build: Callable[..., Layer]         # build(**sizes) -> Layer
    examples: tuple                     # concrete sizes, as dicts
    bug: str                            # the control's bug, in words
    mutant: Callable[[Layer], Callable]  # layer -> its buggy backward

    @property
    def symbols(self) -> tuple:
        return tuple(self.sizes.split())

    def at(self, **sizes) -> Layer:
        return self.build(**sizes)

    def symbolic(self, scope=None) -> Layer:
        """The layer at symbolic sizes (in ``scope``, a ``jax.export.SymbolicScope``, if
        given: a tracer must use the same scope as the layer's closures)."""
        dims = jax.export.symbolic_shape(", ".join(self.symbols), scope=scope)
        return self.build(**dict(zip(self.symbols, dims)))

    def control(self, **sizes) -> Layer:
        layer = self.at(**sizes)
        return layer.with_backward(self.mutant(layer))


# ---------------------------------------------------------------------------------
# Controls: each a backward with one realistic bug.


def _replace_grad(name, fn):
    """The layer's backward with ``dparams[name]`` recomputed by ``fn(params, x, *aux, dy)``."""
    def mutant(layer):
        def backward(params, x, *rest):
            dx, grads = layer.backward(params, x, *rest)
            return dx, {**grads, name: fn(params, x, *rest)}
        return backward
    return mutant


def _replace_dx(fn):
    """The layer's backward with ``dx`` computed by ``fn(layer, params, x, *aux, dy)``."""
    def mutant(layer):
        def backward(params, x, *rest):
            _, grads = layer.backward(params, x, *rest)
            return fn(layer, params, x, *rest), grads
        return backward
    return mutant


def _unflipped_kernel(layer, params, x, dy):
    # Flipping W before a backward that flips it again: dx from the unflipped kernel.
    dx, _ = layer.backward({**params, "W": lax.rev(params["W"], (0, 1))}, x, dy)
    return dx


def _activation_bug(grad):
    return _replace_dx(lambda layer, p, x, dy: dy * grad(x))


def _gelu_tanh_outer_only(x):
    t = jnp.tanh(A.SQRT_2_OVER_PI * (x + A.GELU_CUBIC * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * A.SQRT_2_OVER_PI


def _sdpa_unscaled(q, k, v, p, da):
    dq, dk, dv = sdpa_vjp(q, k, v, p, da)
    scale = jnp.sqrt(jnp.asarray(q.shape[3], q.dtype))
    return dq * scale, dk * scale, dv


def _mlp_fc2_from_preactivation(layer):
    def backward(params, x, dy):
        dx, grads = layer.backward(params, x, dy)
        m = matmul_last(x, params["fc1/W"]) + params["fc1/b"]
        return dx, {**grads, "fc2/W": contract_leading(m, dy)}
    return backward


def _norm_keeping(term):
    """Layer/batch norm's dx with only one of its two mean terms kept."""
    def fn(layer, params, x, dy):
        axes = (x.ndim - 1,) if layer.name == "layer_norm" else tuple(range(x.ndim - 1))
        xhat, r = standardize(x, axes, layer.hyper["eps"])
        g = dy * params["g"]
        if term == "mean(g)":
            return r * (g - jnp.mean(g, axis=axes, keepdims=True))
        return r * (g - xhat * jnp.mean(g * xhat, axis=axes, keepdims=True))
    return _replace_dx(fn)


def _rms_without_scale_term(layer, params, x, dy):
    r = lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + layer.hyper["eps"])
    return r * dy * params["g"]


def _max_pool_unrouted(layer, params, x, dy):
    return place([[dy, dy], [dy, dy]], 2)


def _avg_pool_unscaled(layer, params, x, dy):
    k = layer.hyper["window"]
    return place([[dy] * k for _ in range(k)], k)


def _flatten_swapped(layer, params, x, dy):
    b, h, w, c = x.shape
    return jnp.transpose(dy.reshape(b, w, h, c), (0, 2, 1, 3))


def _token_last(layer, params, x, dy):
    b, n, d = x.shape
    return jnp.concatenate([jnp.zeros((b, n - 1, d), dy.dtype), dy.reshape(b, 1, d)], axis=1)


def _first_example(params, x, dy):
    return lax.index_in_dim(dy, 0, 0, keepdims=False)


# ---------------------------------------------------------------------------------
# The table

_FEATURES = ({"B": 2, "d": 3}, {"B": 3, "d": 5})
_TOKENS = ({"B": 2, "n": 3, "d": 4}, {"B": 3, "n": 2, "d": 5})
_IMAGES = ({"B": 2, "h": 3, "w": 2, "c": 2}, {"B": 1, "h": 2, "w": 3, "c": 3})
_CONV = ({"B": 2, "h": 3, "w": 2, "c": 2, "o": 3}, {"B": 1, "h": 2, "w": 3, "c": 1, "o": 2})

ENTRIES = [
    Entry("dense", "B d m", lambda B, d, m: D.dense((B, d), m),
          ({"B": 2, "d": 3, "m": 4}, {"B": 3, "d": 5, "m": 2}),
          "the bias gradient averaged over the batch instead of summed",
          _replace_grad("b", lambda p, x, dy: jnp.mean(dy, axis=0))),
    Entry("bias", "B d", lambda B, d: D.bias((B, d)), _FEATURES,
          "the bias gradient read from the first example only (no sum over the batch)",
          _replace_grad("b", _first_example)),
    Entry("layer_scale", "B d", lambda B, d: D.layer_scale((B, d)), _FEATURES,
          "the scale's gradient sums dy without the factor x",
          _replace_grad("gamma", lambda p, x, dy: sum_leading(dy, 1))),
    Entry("relu", "B d", lambda B, d: A.relu((B, d)), _FEATURES,
          "dy multiplied by relu(x), the output, instead of the indicator [x > 0]",
          _replace_dx(lambda layer, p, x, dy: dy * A.ACTIVATIONS["relu"][0](x))),
    Entry("gelu_tanh", "B d", lambda B, d: A.gelu((B, d), "tanh"), _FEATURES,
          "the inner derivative 1 + 3a x^2 of tanh's argument dropped",
          _activation_bug(_gelu_tanh_outer_only)),
    Entry("gelu_erf", "B d", lambda B, d: A.gelu((B, d), "erf"), _FEATURES,
          "the x phi(x) term dropped (only Phi(x) kept)",
          _activation_bug(lambda x: 0.5 * (1 + lax.erf(x * A.INV_SQRT_2)))),
    Entry("sigmoid", "B d", lambda B, d: A.sigmoid((B, d)), _FEATURES,
          "the factor (1 - s) dropped", _activation_bug(lax.logistic)),
    Entry("tanh", "B d", lambda B, d: A.tanh((B, d)), _FEATURES,
          "1 - tanh(x) instead of 1 - tanh(x)^2", _activation_bug(lambda x: 1 - jnp.tanh(x))),
    Entry("silu", "B d", lambda B, d: A.silu((B, d)), _FEATURES,
          "the x s (1 - s) term dropped", _activation_bug(lax.logistic)),
    Entry("softmax", "B d", lambda B, d: SM.softmax((B, d)), _FEATURES,
          "the <dy, p> term dropped: dx = p dy",
          _replace_dx(lambda layer, p, x, dy: softmax_rows(x) * dy)),
    Entry("log_softmax", "B d", lambda B, d: SM.log_softmax((B, d)), _FEATURES,
          "dx = dy - p, as if the cotangent's row sums were 1",
          _replace_dx(lambda layer, p, x, dy: dy - softmax_rows(x))),
    Entry("softmax_xent", "B d", lambda B, d: SM.softmax_xent((B, d)), _FEATURES,
          "the 1/B of the batch mean dropped",
          _replace_dx(lambda layer, p, x, t, dy: dy * (softmax_rows(x) * jnp.sum(t, -1, keepdims=True) - t))),
    Entry("layer_norm", "B n d", lambda B, n, d: N.layer_norm((B, n, d)), _TOKENS,
          "the xhat mean(g xhat) term dropped", _norm_keeping("mean(g)")),
    Entry("rms_norm", "B n d", lambda B, n, d: N.rms_norm((B, n, d)), _TOKENS,
          "the x r^2 mean(h x) term dropped", _replace_dx(_rms_without_scale_term)),
    Entry("batch_norm", "B h w c", lambda B, h, w, c: N.batch_norm((B, h, w, c)), _IMAGES,
          "the mean(g) term dropped", _norm_keeping("xhat mean(g xhat)")),
    Entry("conv2d_s1_same", "B h w c o", lambda B, h, w, c, o: C.conv2d((B, h, w, c), o), _CONV,
          "dx correlates with the kernel unflipped", _replace_dx(_unflipped_kernel)),
    Entry("conv2d_s1_valid", "B h w c o",
          lambda B, h, w, c, o: C.conv2d((B, h + 2, w + 2, c), o, padding="VALID"), _CONV,
          "dx correlates with the kernel unflipped", _replace_dx(_unflipped_kernel)),
    Entry("conv2d_s2_same", "B h w c o",
          lambda B, h, w, c, o: C.conv2d((B, 2 * h, 2 * w, c), o, stride=2), _CONV,
          "dx correlates with the kernel unflipped", _replace_dx(_unflipped_kernel)),
    Entry("conv2d_s2_valid", "B h w c o",
          lambda B, h, w, c, o: C.conv2d((B, 2 * h + 1, 2 * w + 1, c), o, stride=2, padding="VALID"), _CONV,
          "dx correlates with the kernel unflipped", _replace_dx(_unflipped_kernel)),
    Entry("depthwise_conv2d_s1_same", "B h w c",
          lambda B, h, w, c: C.depthwise_conv2d((B, h, w, c)), _IMAGES,
          "dx correlates with the kernel unflipped", _replace_dx(_unflipped_kernel)),
    Entry("depthwise_conv2d_s2_valid", "B h w c",
          lambda B, h, w, c: C.depthwise_conv2d((B, 2 * h + 1, 2 * w + 1, c), stride=2, padding="VALID"),
          _IMAGES, "dx correlates with the kernel unflipped", _replace_dx(_unflipped_kernel)),
    Entry("max_pool", "B h w c", lambda B, h, w, c: P.max_pool((B, 2 * h, 2 * w, c)), _IMAGES,
          "dy sent to every entry of its window (not routed to the max)", _replace_dx(_max_pool_unrouted)),
    Entry("avg_pool", "B h w c", lambda B, h, w, c: P.avg_pool((B, 2 * h, 2 * w, c)), _IMAGES,
          "the 1/k^2 factor dropped", _replace_dx(_avg_pool_unscaled)),
    Entry("global_avg_pool", "B h w c", lambda B, h, w, c: P.global_avg_pool((B, h, w, c)), _IMAGES,
          "the 1/(H W) factor dropped",
          _replace_dx(lambda layer, p, x, dy: lax.broadcast_in_dim(dy, x.shape, (0, 3)))),
    Entry("flatten", "B h w c", lambda B, h, w, c: S.flatten((B, h, w, c)), _IMAGES,
          "reshaped back with height and width swapped (a layout mix-up)", _replace_dx(_flatten_swapped)),
    Entry("take_token", "B n d", lambda B, n, d: S.take_token((B, n + 1, d)), _TOKENS,
          "dy placed at the last token instead of the first", _replace_dx(_token_last)),
    Entry("patch_embed", "B h w c d",
          lambda B, h, w, c, d: T.patch_embed((B, 2 * h, 2 * w, c), 2, d),
          ({"B": 2, "h": 2, "w": 3, "c": 1, "d": 4}, {"B": 1, "h": 3, "w": 2, "c": 2, "d": 3}),
          "the class token's gradient read from the first patch token (off by one)",
          _replace_grad("cls", lambda p, x, dy: jnp.sum(lax.index_in_dim(dy, 1, 1, keepdims=False), 0))),
    Entry("mhsa", "B n H e", lambda B, n, H, e: T.mhsa((B, n, H * e), H),
          ({"B": 2, "n": 3, "H": 2, "e": 2}, {"B": 1, "n": 4, "H": 3, "e": 1}),
          "the 1/sqrt(e) scale dropped from the scores' gradient",
          lambda layer: mhsa_backward(layer.hyper["heads"], _sdpa_unscaled)),
    Entry("transformer_mlp_tanh", "B n d m",
          lambda B, n, d, m: T.transformer_mlp((B, n, d), m, "tanh"),
          ({"B": 2, "n": 3, "d": 4, "m": 5}, {"B": 1, "n": 2, "d": 3, "m": 2}),
          "fc2's weight gradient from the pre-activation m instead of gelu(m)",
          _mlp_fc2_from_preactivation),
    Entry("transformer_mlp_erf", "B n d m",
          lambda B, n, d, m: T.transformer_mlp((B, n, d), m, "erf"),
          ({"B": 2, "n": 3, "d": 4, "m": 5}, {"B": 1, "n": 2, "d": 3, "m": 2}),
          "fc2's weight gradient from the pre-activation m instead of gelu(m)",
          _mlp_fc2_from_preactivation),
    Entry("dropout", "B d", lambda B, d: R.dropout((B, d)), _FEATURES,
          "the mask forgotten in the backward: dx = dy",
          _replace_dx(lambda layer, p, x, mask, dy: dy)),
    Entry("drop_path", "B n d", lambda B, n, d: R.drop_path((B, n, d)), _TOKENS,
          "the site forgotten in the backward: dx = dy",
          _replace_dx(lambda layer, p, x, s, dy: dy)),
]

ZOO = {e.name: e for e in ENTRIES}
