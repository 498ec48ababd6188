"""What a layer is: a forward and a hand-written backward in JAX, parameters explicit.

A ``Layer`` is built at its sizes: a constructor takes the input shape and the layer's
hyper-parameters and returns the layer, its parameter list and its output shape. A
size is an ``int`` or a symbolic dimension from ``jax.export.symbolic_shape``, so the
same constructor gives the concrete layer a training run uses and the all-sizes layer
a certifier traces (``jax.make_jaxpr`` over ``jax.ShapeDtypeStruct``s).

The calling convention (``aux`` are inputs without a cotangent, in ``layer.aux``
order: masks, drop-path sites, targets):

    y             = layer.forward(params, x, *aux)
    (dx, dparams) = layer.backward(params, x, *aux, dy)

where ``params`` maps each ``ParamSpec.name`` to an array, and the backward is the
vector-Jacobian product: ``dx = J_x(f)^T dy`` and ``dparams[p] = J_p(f)^T dy``.
A backward receives the forward's *input* and recomputes what it needs (the
"saves"), so a certifier sees one closed function of ``(params, x, aux, dy)``.

Rules every forward and backward here keeps, so that the jaxpr imports into kernel
terms at symbolic sizes: no Python branch on a size, no data-dependent shape, and only
plain primitives (arithmetic, exp/log/tanh/erf/rsqrt/logistic, comparisons and
select, reductions, broadcast/reshape/transpose, dot_general, slice/pad/concatenate,
conv_general_dilated without dilation). Slicing goes through ``lax.slice``: numpy
indexing of a symbolic axis becomes a gather.
"""
from __future__ import annotations

import dataclasses
import math
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import jax.numpy as jnp
import numpy as np
from jax import lax

Dim = Any            # an int, or a jax.export symbolic dimension
Shape = tuple        # of Dims


# ---------------------------------------------------------------------------------
# Initializers (numpy: drawing a few arrays once needs no compiled XLA function)


@dataclass(frozen=True)
class Init:
    """A named initializer: ``init(rng, shape) -> numpy array`` (float64), ``rng`` a
    ``numpy.random.Generator``; ``fn(rng, shape, *args)`` is a module-level function,
    so two initializers with the same arguments compare equal."""
    name: str
    fn: Callable
    args: tuple = ()

    def __call__(self, rng, shape):
        return np.asarray(self.fn(rng, tuple(shape), *self.args), dtype=np.float64)

    def __str__(self):
        return self.name


def _fans(shape):
    """(fan_in, fan_out) of a weight whose last axis is the output features: a dense
    ``(d_in, d_out)`` or a convolution kernel ``(kh, kw, c_in, c_out)``."""
    if len(shape) < 2:
        return shape[0] if shape else 1, shape[0] if shape else 1
    receptive = math.prod(shape[:-2])
    return receptive * shape[-2], receptive * shape[-1]


def _full(rng, shape, value):
    return np.full(shape, value)


def _normal(rng, shape, std):
    return std * rng.standard_normal(shape)


def _glorot_uniform(rng, shape):
    fan_in, fan_out = _fans(shape)
    a = math.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-a, a, shape)


def _he_normal(rng, shape):
    fan_in, _ = _fans(shape)
    return math.sqrt(2.0 / fan_in) * rng.standard_normal(shape)


def zeros() -> Init:
    return Init("zeros", _full, (0.0,))


def ones() -> Init:
    return Init("ones", _full, (1.0,))


def constant(value: float) -> Init:
    return Init(f"constant({value:g})", _full, (float(value),))


def normal(std: float) -> Init:
    return Init(f"normal({std:g})", _normal, (float(std),))


def glorot_uniform() -> Init:
    """U(-a, a) with a = sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010)."""
    return Init("glorot_uniform", _glorot_uniform)


def he_normal() -> Init:
    """N(0, 2 / fan_in): keeps the activation variance through ReLUs (He et al., 2015)."""
    return Init("he_normal", _he_normal)


# ---------------------------------------------------------------------------------
# Parameters, auxiliary inputs, layers


@dataclass(frozen=True)
class ParamSpec:
    """A parameter: its name in the params dict, its shape (in the layer's sizes), how
    it is initialized, and whether weight decay applies (not to biases and norm
    parameters)."""
    name: str
    shape: Shape
    init: Init
    decay: bool = False

    def renamed(self, name: str) -> "ParamSpec":
        return dataclasses.replace(self, name=name)


@dataclass(frozen=True)
class AuxSpec:
    """An input without a cotangent. ``optional`` ones may be passed as ``None``: a
    drop-path site that is absent means no scaling."""
    name: str
    shape: Shape
    optional: bool = False

    def renamed(self, name: str) -> "AuxSpec":
        return dataclasses.replace(self, name=name)


@dataclass(frozen=True)
class Layer:
    """A forward and its hand-written backward, at declared shapes.

    ``x`` and ``y`` are the input and output shapes; ``params`` and ``aux`` list the
    parameters and the cotangent-free inputs; ``hyper`` records the hyper-parameters
    (stride, eps, ...) for reports; ``doc`` states the math of the backward. A layer
    made by a combinator (``verigrad.nn.combinators``) is named after it and lists the
    layers it combines in ``children``, so a certifier can walk the tree: certified
    leaves, composition rules at the nodes.
    """
    name: str
    x: Shape
    y: Shape
    forward: Callable
    backward: Callable
    params: tuple = ()
    aux: tuple = ()
    hyper: Mapping = field(default_factory=dict)
    doc: str = ""
    children: tuple = ()

    @property
    def param_names(self) -> tuple:
        return tuple(p.name for p in self.params)

    @property
    def aux_names(self) -> tuple:
        return tuple(a.name for a in self.aux)

    def with_backward(self, backward: Callable) -> "Layer":
        """The same layer with another backward (a control: a deliberate bug)."""
        return dataclasses.replace(self, backward=backward)

    def init(self, seed: int = 0, dtype=jnp.float32) -> dict:
        return init_params(self.params, seed, dtype)

    def __repr__(self):
        hyper = "".join(f", {k}={v}" for k, v in self.hyper.items())
        return f"Layer({self.name}: {shape_str(self.x)} -> {shape_str(self.y)}{hyper})"


def init_params(specs, seed: int = 0, dtype=jnp.float32) -> dict:
    """Initial values for ``specs``. Each parameter draws from a generator seeded by
    ``(seed, crc32(name))``, so a value does not depend on the order of the list."""
    out = {}
    for p in specs:
        rng = np.random.default_rng([seed, zlib.crc32(p.name.encode())])
        out[p.name] = jnp.asarray(p.init(rng, concrete(p.shape, f"parameter {p.name!r}")), dtype)
    return out


def concrete(shape: Shape, what: str) -> tuple:
    """``shape`` as ints, or a clear error if a dimension is symbolic."""
    if not all(isinstance(d, int) for d in shape):
        raise ValueError(f"{what} has symbolic shape {shape_str(shape)}; build the layer at "
                         "concrete sizes to make arrays")
    return tuple(shape)


def shape_str(shape: Shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


def same_shape(a: Shape, b: Shape) -> bool:
    """Provably equal shapes (symbolic dimensions compare as expressions)."""
    return len(a) == len(b) and all(bool(u == v) for u, v in zip(a, b))


def expect_rank(layer: str, x: Shape, rank: int, layout: str):
    if len(x) != rank:
        raise ValueError(f"{layer}: input shape {shape_str(x)} should have rank {rank} ({layout})")


# ---------------------------------------------------------------------------------
# Small shared pieces of forward and backward math


def scale_examples(s, t):
    """``s[b] * t[b, ...]``: a per-example scalar (a drop-path site) applied to a batch;
    a scalar ``s`` (one example) scales all of ``t``. ``s is None`` means the site is
    absent: no scaling."""
    if s is None:
        return t
    if jnp.ndim(s) == 0:
        return s * t
    return lax.broadcast_in_dim(s, t.shape, (0,)) * t


def sum_leading(t, keep: int):
    """Sum over every axis but the last ``keep``: the gradient of a parameter that is
    broadcast over the leading (batch, token, spatial) axes."""
    return jnp.sum(t, axis=tuple(range(t.ndim - keep)))


def contract_leading(a, b):
    """``sum_{lead} a[lead, i] b[lead, j]`` -> ``[i, j]``: the weight gradient ``x^T dy``
    of a dense layer applied over any number of leading axes."""
    lead = tuple(range(a.ndim - 1))
    return lax.dot_general(a, b, ((lead, lead), ((), ())))


def matmul_last(a, w):
    """``a @ w`` over the last axis of ``a``, with any number of leading axes."""
    return lax.dot_general(a, w, (((a.ndim - 1,), (0,)), ((), ())))


def matmul_last_t(a, w):
    """``a @ w^T`` over the last axis of ``a``: the input cotangent of a dense layer."""
    return lax.dot_general(a, w, (((a.ndim - 1,), (1,)), ((), ())))


def as_real(dim, dtype):
    """A size as a real number (``dim_as_value`` when the size is symbolic)."""
    return jnp.asarray(dim, dtype)


def where(cond, a, b):
    """``cond ? a : b`` elementwise, scalars broadcast, as one ``select_n``."""
    shape = jnp.broadcast_shapes(jnp.shape(cond), jnp.shape(a), jnp.shape(b))
    dtype = jnp.result_type(a, b)
    a = jnp.broadcast_to(jnp.asarray(a, dtype), shape)
    b = jnp.broadcast_to(jnp.asarray(b, dtype), shape)
    return lax.select(jnp.broadcast_to(cond, shape), a, b)


def strided(x, starts, strides):
    """``x[s0::t0, s1::t1, ...]`` as one ``lax.slice`` (a numpy strided index on a
    symbolic axis would become a gather)."""
    return lax.slice(x, tuple(starts), tuple(x.shape), tuple(strides))
