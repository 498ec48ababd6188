r"""Optimizer updates as plain JAX math, one rule per optimizer (untrusted; the render
tie checks the emitted text against exactly these formulas).

For a parameter :math:`p` with gradient :math:`g`, learning rate :math:`\eta`, and weight
decay :math:`\lambda` (zero for the parameters a network does not decay: biases, norm
gains and shifts, tokens):

========== ========================================================================
``sgd``      :math:`p \leftarrow p - \eta\,(g + \lambda p)`
``momentum`` Nesterov: :math:`g' = g + \lambda p`, :math:`u \leftarrow \mu u + g'`,
             :math:`p \leftarrow p - \eta\,(g' + \mu u)`
``adamw``    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`,
             :math:`v \leftarrow \beta_2 v + (1-\beta_2) g^2`,
             :math:`p \leftarrow p - \eta\,\bigl(\frac{m / c_1}{\sqrt{v / c_2} + \epsilon} + \lambda p\bigr)`
========== ========================================================================

AdamW's bias corrections :math:`c_1 = 1 - \beta_1^t`, :math:`c_2 = 1 - \beta_2^t` are
inputs of the step (the training loop knows ``t``), and its decay is decoupled from
the moments (Loshchilov and Hutter, 2019).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax.numpy as jnp


@dataclass(frozen=True)
class Optimizer:
    """``slots``: the state kept per parameter (zeros at step 0); ``defaults``: the
    hyperparameters; ``update(p, g, state, lr, wd, bc, hyper) -> (p', state')``, with
    ``wd`` the parameter's weight decay and ``bc`` the bias corrections (or ``None``);
    ``nonneg_slots``: the slots every update keeps nonnegative (the tie rests on it where
    the step takes their root: ``render.domains.preconditions``)."""
    name: str
    slots: tuple
    defaults: dict
    update: Callable
    corrections: bool = False
    nonneg_slots: tuple = ()


def _sgd(p, g, state, lr, wd, bc, hyper):
    return p - lr * (g + wd * p), ()


def _momentum(p, g, state, lr, wd, bc, hyper):
    (u,) = state
    mu = hyper["momentum"]
    g = g + wd * p
    u = mu * u + g
    return p - lr * (g + mu * u), (u,)


def _adamw(p, g, state, lr, wd, bc, hyper):
    m, v = state
    b1, b2 = hyper["betas"]
    c1, c2 = bc
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * (g * g)
    step = (m / c1) / (jnp.sqrt(v / c2) + hyper["eps"])
    return p - lr * (step + wd * p), (m, v)


OPTIMIZERS = {
    "sgd": Optimizer("sgd", (), {"weight_decay": 0.0}, _sgd),
    "momentum": Optimizer("momentum", ("mom",), {"momentum": 0.9, "nesterov": True, "weight_decay": 0.0}, _momentum),
    "adamw": Optimizer("adamw", ("m", "v"), {"betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.05}, _adamw,
                       corrections=True, nonneg_slots=("v",)),
}


def hyperparameters(name: str, **overrides) -> dict:
    """The manifest's ``optimizer`` entry: the name and every hyperparameter."""
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {name!r} (known: {', '.join(OPTIMIZERS)})")
    opt = OPTIMIZERS[name]
    unknown = sorted(set(overrides) - set(opt.defaults))
    if unknown:
        raise ValueError(f"{name} has no hyperparameter {', '.join(unknown)} (it has {', '.join(opt.defaults)})")
    # ``_momentum`` is Nesterov's update whatever the entry says; the manifest records the
    # entry, so ``nesterov=False`` was rendered, tied and trained as Nesterov momentum
    # while the manifest said heavy-ball (red team RT-46-e3). Only what is computed is named.
    if name == "momentum" and overrides.get("nesterov", True) is not True:
        raise ValueError(f"momentum: nesterov={overrides['nesterov']!r}, but only Nesterov momentum is implemented "
                         "(nesterov=True)")
    return {"name": name, **opt.defaults, **overrides}


__all__ = ["OPTIMIZERS", "Optimizer", "hyperparameters"]
