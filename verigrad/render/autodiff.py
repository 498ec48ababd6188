"""The plain-JAX reference step (tests and benchmarks only, never on the certified
path): the same network forward, a softmax cross-entropy written with
``jax.nn.log_softmax``, gradients by ``jax.value_and_grad``, and the same optimizer
(``step.train_step`` with its gradient function replaced). It is the independent
oracle the certified gradient is compared with, and the baseline of the accuracy
benchmark."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from . import step as S


def reference_loss(net):
    """Mean cross-entropy of ``net``'s logits against target distributions ``y``."""
    def loss(params, x, y, masks):
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(net.forward(params, x, masks)), axis=-1))
    return loss


def reference_gradients(net, cfg: S.Config):
    """``(params, x, y, masks) -> (loss, grads)`` by ``jax.value_and_grad``, clipped
    like the certified one."""
    value_and_grad = jax.value_and_grad(reference_loss(net))

    def fn(params, x, y, masks):
        loss, grads = value_and_grad(params, x, y, masks)
        if cfg.clip:
            grads = S._global_norm_clip(grads, cfg.clip)
        return loss, grads
    return fn


def reference_step(net, cfg: S.Config, lay: S.Layout | None = None):
    """The train step of ``step.train_step`` with the reference gradients: the same
    arguments, the same results."""
    return S.train_step(net, cfg, lay, gradients=reference_gradients(net, cfg))


__all__ = ["reference_loss", "reference_gradients", "reference_step"]


def render_reference(net, out_dir, batch=None, opt: str = "adamw", drop_path: float = 0.0, clip=None,
                     label_smoothing: float = 0.1, options=None, **hyper):
    """A rendered directory whose train step is ``reference_step``: the same layout,
    data, initialisation and masks as ``verigrad.render.render`` gives, so the
    training loop runs both alike. Not tied, not certified (the manifest says so)."""
    from . import configure
    from . import emit as E
    network, cfg = configure(net, batch, opt, drop_path, clip, label_smoothing, options, **hyper)
    em = E.emit(network, cfg, step=reference_step)
    out = E.write_modules(em, out_dir)
    note = "plain-JAX reference: gradients by jax.value_and_grad, not certified, not tied"
    E.write_manifest(em, out, {"reference": {"status": "UNKNOWN", "note": note}})
    return out


__all__ += ["render_reference"]
