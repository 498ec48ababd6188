"""A network: one layer (a combinator tree over zoo layers) mapping images to logits,
with its drop-path sites and their keep probabilities."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

import jax
import jax.numpy as jnp

from verigrad.nn.layers.core import Layer, init_params
from verigrad.nn.layers.drop import keep_mask


@dataclass(frozen=True)
class Network:
    """``forward(params, x, masks) -> logits`` and
    ``backward(params, x, masks, dlogits) -> (dx, dparams)``.

    ``masks`` maps each drop-path site (``sites``) to its per-example mask ``(B,)``,
    entries ``0`` or ``1/keep``; a site missing from ``masks``, or ``masks=None``,
    is absent (no dropping: evaluation).
    """
    name: str
    layer: Layer
    keep: Mapping[str, float] = field(default_factory=dict)
    classes: int = 10

    @property
    def params(self) -> tuple:
        """The parameter list: names, shapes, initializers, weight decay."""
        return self.layer.params

    @property
    def sites(self) -> tuple:
        return self.layer.aux_names

    @property
    def decayed(self) -> tuple:
        """Names of the parameters that get weight decay (not biases, norms, tokens)."""
        return tuple(p.name for p in self.params if p.decay)

    def init(self, seed: int = 0, dtype=jnp.float32) -> dict:
        return init_params(self.params, seed, dtype)

    def masks_in_order(self, masks: Optional[Mapping]) -> list:
        masks = dict(masks or {})
        unknown = sorted(set(masks) - set(self.sites))
        if unknown:
            raise ValueError(f"{self.name}: unknown drop-path site(s) {', '.join(unknown)}; "
                             f"its sites are {', '.join(self.sites) or 'none'}")
        return [masks.get(s) for s in self.sites]

    def forward(self, params, x, masks: Optional[Mapping] = None):
        return self.layer.forward(params, x, *self.masks_in_order(masks))

    def backward(self, params, x, masks: Optional[Mapping], dlogits):
        return self.layer.backward(params, x, *self.masks_in_order(masks), dlogits)

    def sample_masks(self, key, batch: int, dtype=jnp.float32) -> dict:
        """Drop-path masks for a training step: per site, ``1/keep`` with probability
        ``keep`` per example, else 0."""
        return {s: keep_mask(jax.random.fold_in(key, i), (batch,), self.keep.get(s, 1.0), dtype)
                for i, s in enumerate(self.sites)}
