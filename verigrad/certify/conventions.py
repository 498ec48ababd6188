"""The kernel's functions and powers in float64, with its total conventions: ``log 0 = 0``
and ``log x = log |x|``, ``0^-k = 0``, and ``x^r = 0`` for ``x <= 0`` and a fractional ``r``.
Both evaluators (``evaluate``, entry by entry, and ``vectorized``, whole tensors) read
a term's numbers through these, so they cannot disagree on what a term means."""
from __future__ import annotations

from fractions import Fraction

import numpy as np


def _erf(x):
    # scipy.special takes a fifth of a second to import, and most terms have no erf
    from scipy.special import erf
    return erf(x)


FUNCTIONS = {
    "exp": np.exp,
    "log": lambda x: np.where(np.abs(x) == 0, 0.0, np.log(np.where(np.abs(x) == 0, 1.0, np.abs(x)))),
    "tanh": np.tanh,
    "erf": _erf,
    "sin": np.sin,
    "cos": np.cos,
}


def function(name: str, x):
    """The kernel's named function ``name`` (exp, log, tanh, erf, sin, cos) at ``x``."""
    if name not in FUNCTIONS:
        raise ValueError(f"cannot evaluate the function {name}")
    return FUNCTIONS[name](np.asarray(x, dtype=np.float64))


def power(x, e: Fraction):
    """``x ** e`` for a rational ``e``, as the kernel reads it."""
    x = np.asarray(x, dtype=np.float64)
    if e.denominator == 1:
        k = int(e)
        if k >= 0:
            return x ** k
        safe = np.where(x == 0, 1.0, x)
        return np.where(x == 0, 0.0, safe ** k)
    ok = x > 0
    return np.where(ok, np.where(ok, x, 1.0) ** float(e), 0.0)
