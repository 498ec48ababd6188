"""Parameter initialisers named in the manifest (``init``), drawn from one seeded
numpy ``Generator``. Fan-in is the product of all axes but the last (``[in, out]``
dense weights, ``[kh, kw, cin, cout]`` kernels); a vector has fan-in 1.

- ``he_normal``:      N(0, 2 / fan_in), for ReLU layers
- ``lecun_normal``:   N(0, 1 / fan_in)
- ``glorot_uniform``: U(-a, a), a = sqrt(6 / (fan_in + fan_out))
- ``normal(s)``:      N(0, s^2); ``trunc_normal(s)``: the same, redrawn outside 2 s
- ``zeros``, ``ones``, ``constant(v)``
"""
from __future__ import annotations

import re
from math import prod, sqrt

import numpy as np


def _fans(shape):
    fan_in = prod(shape[:-1]) if len(shape) > 1 else 1
    return fan_in, shape[-1] if shape else 1


def _trunc(rng, shape, std):
    x = rng.standard_normal(shape)
    bad = np.abs(x) > 2
    while bad.any():
        x[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(x) > 2
    return x * std


def initial_value(init: str, shape, rng: np.random.Generator, dtype=np.float32) -> np.ndarray:
    shape = tuple(shape)
    fan_in, fan_out = _fans(shape)
    if init == "zeros":
        x = np.zeros(shape)
    elif init == "ones":
        x = np.ones(shape)
    elif init == "he_normal":
        x = rng.standard_normal(shape) * sqrt(2.0 / fan_in)
    elif init == "lecun_normal":
        x = rng.standard_normal(shape) * sqrt(1.0 / fan_in)
    elif init == "glorot_uniform":
        a = sqrt(6.0 / (fan_in + fan_out))
        x = rng.uniform(-a, a, shape)
    elif init.startswith("constant("):
        m = re.fullmatch(r"constant\(([^)]*)\)", init)
        if not m:
            raise ValueError(f"unknown initialiser {init!r}")
        x = np.full(shape, float(m.group(1)))
    else:
        m = re.fullmatch(r"(trunc_)?normal\(([^)]*)\)", init)
        if not m:
            raise ValueError(f"unknown initialiser {init!r}")
        std = float(m.group(2))
        x = _trunc(rng, shape, std) if m.group(1) else rng.standard_normal(shape) * std
    return np.asarray(x, dtype=dtype)


__all__ = ["initial_value"]
