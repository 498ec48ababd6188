r"""Convolutions, NHWC with HWIO kernels: conv2d (stride 1 or 2, SAME or VALID) and
depthwise conv2d.

Along one spatial axis, with padding ``lo`` and stride ``s``, the forward reads
:math:`y[i] = \sum_a x[s i + a - lo]\,W[a]`. Its VJP, in the forms a prover follows:

- input: interior-pad ``dy`` with ``s - 1`` zeros (so ``dy`` sits at ``s i``), pad its
  edges by ``k - 1 - lo`` and ``k - 1 - hi``, and correlate with the kernel flipped
  (and, for a full convolution, input and output channels swapped):
  :math:`dx[j] = \sum_a dy_s[j + lo - a]\,W[a]`;
- kernel: :math:`dW[a] = \sum_{n,i} x_{pad}[s i + a]\,dy[i]`, a stride-1 correlation of
  the padded input with the interior-padded ``dy`` over the batch axis (conv2d), or
  ``k*k`` strided slices of the padded input times ``dy`` (depthwise).

No ``lhs_dilation`` / ``rhs_dilation``: dilation is spelled as interior padding.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp
from jax import lax

from .core import Layer, ParamSpec, expect_rank, he_normal, shape_str, sum_leading, zeros

NHWC = ("NHWC", "HWIO", "NHWC")
# dW as a correlation: x's channels play the batch, x's batch the features.
KERNEL_GRAD = ("CHWN", "IHWO", "HWNC")


@dataclass(frozen=True)
class Axis:
    """The geometry of one spatial axis: kernel ``k``, stride ``s``, padding
    ``lo``/``hi``, and ``rest``: trailing input rows (after padding) no window reads."""
    k: int
    s: int
    lo: int
    hi: int
    rest: int
    out: object

    @property
    def input_pads(self):
        """(low, high, interior) padding of ``dy`` for the input cotangent."""
        return (self.k - 1 - self.lo, self.k - 1 - self.hi + self.rest, self.s - 1)

    @property
    def read_pads(self):
        """(low, high, interior) padding of ``x`` down to the rows the windows read."""
        return (self.lo, self.hi - self.rest, 0)


def _known_int(value, what):
    if not isinstance(value, int):
        raise ValueError(f"{what} is {value}, not a known integer: declare the spatial size "
                         "so that it is (e.g. 2*h for stride 2)")
    return value


def axis(size, k: int, s: int, padding) -> Axis:
    """The geometry of a spatial axis of ``size`` (int or symbolic) under ``padding``:
    ``"VALID"``, ``"SAME"`` (as ``lax.conv`` pads: output ``ceil(size / s)``, the odd
    pad at the end) or an explicit ``(lo, hi)``."""
    if padding == "VALID":
        lo = hi = 0
    elif padding == "SAME":
        r = _known_int(size % s, f"SAME padding: size {size} mod stride {s}")
        total = max(k - (s if r == 0 else r), 0)
        lo, hi = total // 2, total - total // 2
    elif isinstance(padding, tuple) and len(padding) == 2:
        lo, hi = padding
    else:
        raise ValueError(f"padding should be 'SAME', 'VALID' or (lo, hi), got {padding!r}")
    span = size + lo + hi - k
    rest = _known_int(span % s, f"padded size {size} + {lo + hi} - {k} mod stride {s}")
    return Axis(k, s, lo, hi, rest, span // s + 1)


def conv(x, w, ah: Axis, aw: Axis, groups=1):
    return lax.conv_general_dilated(x, w, (ah.s, aw.s), ((ah.lo, ah.hi), (aw.lo, aw.hi)),
                                    dimension_numbers=NHWC, feature_group_count=groups)


def conv_input_vjp(dy, w, ah: Axis, aw: Axis, depthwise: bool = False):
    """``dx``: interior-padded ``dy`` correlated with the flipped kernel, stride 1."""
    flipped = lax.rev(w, (0, 1))
    if not depthwise:
        flipped = jnp.transpose(flipped, (0, 1, 3, 2))      # HWIO -> HWOI
    dyd = lax.pad(dy, jnp.zeros((), dy.dtype), ((0, 0, 0), ah.input_pads, aw.input_pads, (0, 0, 0)))
    groups = dy.shape[3] if depthwise else 1
    return lax.conv_general_dilated(dyd, flipped, (1, 1), ((0, 0), (0, 0)),
                                    dimension_numbers=NHWC, feature_group_count=groups)


def _read(x, ah: Axis, aw: Axis):
    """``x`` padded as the forward pads it, less the trailing rows no window reads."""
    return lax.pad(x, jnp.zeros((), x.dtype), ((0, 0, 0), ah.read_pads, aw.read_pads, (0, 0, 0)))


def conv_kernel_vjp(x, dy, ah: Axis, aw: Axis):
    """``dW[a, b, ci, co] = sum_{n,i,j} xpad[n, s i + a, s j + b, ci] dy[n, i, j, co]``."""
    dyd = lax.pad(dy, jnp.zeros((), dy.dtype), ((0, 0, 0), (0, 0, ah.s - 1), (0, 0, aw.s - 1), (0, 0, 0)))
    return lax.conv_general_dilated(_read(x, ah, aw), dyd, (1, 1), ((0, 0), (0, 0)),
                                    dimension_numbers=KERNEL_GRAD)


def depthwise_kernel_vjp(x, dy, ah: Axis, aw: Axis):
    """``dW[a, b, 0, c] = sum_{n,i,j} xpad[n, s i + a, s j + b, c] dy[n, i, j, c]``: one
    strided slice of the padded input per kernel tap."""
    xp = _read(x, ah, aw)
    n, oh, ow, c = dy.shape
    taps = []
    for a in range(ah.k):
        for b in range(aw.k):
            window = lax.slice(xp, (0, a, b, 0), (n, a + (oh - 1) * ah.s + 1, b + (ow - 1) * aw.s + 1, c),
                               (1, ah.s, aw.s, 1))
            taps.append(jnp.sum(window * dy, axis=(0, 1, 2)))
    return jnp.concatenate([t.reshape(1, c) for t in taps]).reshape(ah.k, aw.k, 1, c)


def _geometry(name, x, k, stride, padding):
    expect_rank(name, x, 4, "NHWC")
    if stride not in (1, 2):
        raise ValueError(f"{name}: stride {stride} not supported (1 or 2)")
    try:
        return axis(x[1], k, stride, padding), axis(x[2], k, stride, padding)
    except ValueError as e:
        raise ValueError(f"{name} at input {shape_str(x)}: {e}") from None


def conv2d(x, c_out, *, k: int = 3, stride: int = 1, padding="SAME", bias: bool = True) -> Layer:
    """2-D convolution, NHWC input ``x``, kernel ``W: (k, k, c_in, c_out)``, optional
    bias. Backward: ``dx`` by the flipped kernel over interior-padded ``dy``; ``dW`` by
    correlating the padded input with ``dy``; ``db = sum dy``."""
    ah, aw = _geometry("conv2d", x, k, stride, padding)

    def forward(params, x):
        y = conv(x, params["W"], ah, aw)
        return y + params["b"] if bias else y

    def backward(params, x, dy):
        grads = {"W": conv_kernel_vjp(x, dy, ah, aw)}
        if bias:
            grads["b"] = sum_leading(dy, 1)
        return conv_input_vjp(dy, params["W"], ah, aw), grads

    params = (ParamSpec("W", (k, k, x[3], c_out), he_normal(), decay=True),)
    if bias:
        params += (ParamSpec("b", (c_out,), zeros()),)
    return Layer("conv2d", tuple(x), (x[0], ah.out, aw.out, c_out), forward, backward, params,
                 hyper={"k": k, "stride": stride, "padding": padding},
                 doc="dx = conv(pad_interior(dy, s-1), flip(W)^T); dW = corr(xpad, pad_interior(dy)); db = sum dy")


def depthwise_conv2d(x, *, k: int = 3, stride: int = 1, padding="SAME", bias: bool = True) -> Layer:
    """Depthwise convolution (channel multiplier 1): kernel ``W: (k, k, 1, C)``, each
    channel convolved with its own filter (``feature_group_count = C``)."""
    ah, aw = _geometry("depthwise_conv2d", x, k, stride, padding)

    def forward(params, x):
        y = conv(x, params["W"], ah, aw, groups=x.shape[3])
        return y + params["b"] if bias else y

    def backward(params, x, dy):
        grads = {"W": depthwise_kernel_vjp(x, dy, ah, aw)}
        if bias:
            grads["b"] = sum_leading(dy, 1)
        return conv_input_vjp(dy, params["W"], ah, aw, depthwise=True), grads

    params = (ParamSpec("W", (k, k, 1, x[3]), he_normal(), decay=True),)
    if bias:
        params += (ParamSpec("b", (x[3],), zeros()),)
    return Layer("depthwise_conv2d", tuple(x), (x[0], ah.out, aw.out, x[3]), forward, backward, params,
                 hyper={"k": k, "stride": stride, "padding": padding},
                 doc="dx = depthwise conv(pad_interior(dy, s-1), flip(W)); dW[a,b] = sum xpad[s i + a] dy")
