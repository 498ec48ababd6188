"""Concrete inputs for imported claims (untrusted): values that mean what the arguments mean.

The kernel's variables are real, but an imported argument may be an integer tensor
(labels, indices) or a boolean one (a mask), and a label may be modelled by a one-hot
variable (``verigrad.frontends.jaxpr.Importer.onehot``). Every numeric check (translation
validation, the counterexample search, the confirmation of a counterexample by JAX)
draws its inputs here, so that it only ever tests points of the real domain: integer
arguments take integer values inside the range the model assumes, one-hot variables
agree with their labels, a mask is ``[m > 0]`` of its real variable.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verigrad.kernel import Var
from .evaluate import concrete_shape, ival, random_values

INT_HIGH = 4  # integer arguments without an assumed range take values in [0, 4)


@dataclass
class Domain:
    """The imported arguments (``Var`` -> kind and dtype) and the importer's models."""
    kinds: dict = field(default_factory=dict)        # Var -> 'real' | 'int' | 'bool'
    dtypes: dict = field(default_factory=dict)       # Var -> numpy dtype name for JAX
    int_ranges: dict = field(default_factory=dict)   # Var -> [Poly k, ...]: values in [0, min k)
    onehot_vars: dict = field(default_factory=dict)  # (Var, Poly k) -> Var M

    @staticmethod
    def of(importer, kinds: dict, dtypes: dict) -> "Domain":
        # the importer's tables themselves: models are made lazily, as terms are built
        return Domain(dict(kinds), dict(dtypes), importer.int_ranges, importer.onehot_vars)

    def fix(self, values: dict, sizes: dict, rng: np.random.Generator) -> dict:
        """Make ``values`` (Var -> float64 array) respect the argument kinds, in place."""
        for var, kind in self.kinds.items():
            if kind != "int":
                continue
            shape = concrete_shape(var.shape, sizes)
            highs = [ival(k, sizes) for k in self.int_ranges.get(var, ())]
            high = max(1, min(highs)) if highs else INT_HIGH
            values[var] = rng.integers(0, high, shape).astype(np.float64)
        for (var, k), M in self.onehot_vars.items():
            labels = values[var]
            kk = ival(k, sizes)
            m = np.zeros(labels.shape + (kk,))
            for q in range(kk - 1):  # the last column is not used by the model
                m[..., q] = labels == q
            values[M] = m
        return values

    def sample(self, variables, sizes: dict, rng: np.random.Generator) -> dict:
        values = random_values(sorted(variables, key=lambda v: v.name), sizes, rng)
        return self.fix(values, sizes, rng)

    def jax_value(self, var: Var, value: np.ndarray):
        """The array JAX receives for ``var``'s value."""
        kind = self.kinds.get(var, "real")
        if kind == "bool":
            return np.asarray(value > 0)
        if kind == "int":
            return np.asarray(value).astype(self.dtypes.get(var, "int32"))
        return np.asarray(value, dtype=np.float64)
