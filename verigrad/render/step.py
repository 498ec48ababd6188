r"""The train step as one JAX function, and the layout of its arguments (untrusted).

One step of a ``Network`` on a batch ``x`` with (label-smoothed) targets ``t``:

.. math::
   z = f_\theta(x; s), \quad
   L = \mathrm{xent}(z, t), \quad
   \bar z = \mathrm{xent.back}(z, t, 1), \quad
   \bar\theta = f.\mathrm{back}(\theta, x; s, \bar z), \quad
   \theta', \sigma' = \mathrm{update}(\theta, \mathrm{clip}(\bar\theta), \sigma)

where ``f`` is the network (its forward and its hand-written, certified backward),
``xent`` the zoo's softmax cross-entropy (mean over the batch; the targets arrive
smoothed, ``(1 - a) onehot + a / C``, so the step does not know ``a``), ``s`` the
drop-path masks (one ``(B,)`` vector per site, ``1/keep`` folded into the values) and
``update`` an optimizer of ``optimizers``. No ``jax.grad`` anywhere: the gradient is
the network's backward applied to the loss's backward.

Gradient clipping (optional) rescales every gradient by
:math:`\min(1, c / \lVert\bar\theta\rVert)`, written ``c / max(norm, c)`` so a zero
gradient stays zero without a division by zero.

Argument order of ``@main`` (the manifest lists it): parameters ``params/NAME`` in the
network's order, optimizer state ``opt/SLOT/NAME`` slot by slot, ``x``, ``y``, the
masks ``site/SITE`` in the network's site order, ``lr``, then ``bc1``, ``bc2`` for
AdamW. Results: the new parameters, the new state, ``loss``. The forward module takes
the parameters, ``x`` and the masks, and returns ``logits``.
"""
from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass, field

import jax
import jax.numpy as jnp

from verigrad.nn.layers.logits import softmax_xent
from .optimizers import OPTIMIZERS, hyperparameters  # noqa: F401

IMAGE = (8, 8, 1)


@dataclass(frozen=True)
class Config:
    """Everything a rendered step depends on besides the network's code; the
    manifest records it (``render``), and the tie rebuilds the step from it."""
    net: str
    batch: int = 64
    optimizer: dict = field(default_factory=lambda: hyperparameters("adamw"))
    drop_path: float = 0.0
    clip: float | None = None
    label_smoothing: float = 0.1
    options: dict | None = field(default_factory=dict)    # None: a Network given as an object
    source: dict | None = None     # a network file (verigrad.nn.builder): {"file", "name", "sha256"}

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Config":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def build_network(cfg: Config):
    """The network ``cfg.net`` of ``verigrad.nn.nets`` at ``cfg.batch``; a builder
    with a ``drop_path_rate`` gets ``cfg.drop_path``."""
    from verigrad.nn.nets import NETS
    if cfg.source is not None:          # a network file: loaded again, and refused if it changed since
        from verigrad.nn.builder import load_source
        model = load_source(cfg.source, check_hash=True)
        # Certified before it is rendered, tied or trained: a file's network may be defined
        # with ``certify=False`` ("only the shapes are checked"), and one whose Custom
        # backward is wrong was rendered, tied and trained (red team RT-46-e4; the manifest
        # said UNKNOWN, ``verigrad train`` printed only render_tie CHECKED). Cached once proved.
        model.certify()
        return model.build(cfg.batch, drop_path_rate=cfg.drop_path)
    if cfg.net not in NETS:
        raise ValueError(f"unknown network {cfg.net!r} (known: {', '.join(NETS)})")
    if cfg.options is None:
        raise ValueError(f"{cfg.net} was rendered from a Network object, not by name: pass the network")
    builder = NETS[cfg.net]
    kwargs = dict(cfg.options)
    if "drop_path_rate" in inspect.signature(builder).parameters:
        kwargs["drop_path_rate"] = cfg.drop_path
    return builder(cfg.batch, **kwargs)


def active_sites(net, cfg: Config) -> tuple:
    """The drop-path sites the step takes masks for: none at rate 0 (every site is
    then absent, and the module is the drop-free network's)."""
    return tuple(net.sites) if cfg.drop_path > 0 else ()


# -- the layout --------------------------------------------------------------------------------


def _port(name, role, shape, **extra) -> dict:
    return {"name": name, "role": role, "shape": [int(d) for d in shape], "dtype": "f32", **extra}


@dataclass(frozen=True)
class Layout:
    """The ports of both modules (manifest ``inputs`` / ``outputs`` entries)."""
    params: tuple          # the network's parameter names, in order
    slots: tuple           # optimizer state slots
    sites: tuple
    step_inputs: list
    step_outputs: list
    forward_inputs: list
    forward_outputs: list

    def structs(self, ports) -> list:
        return [jax.ShapeDtypeStruct(tuple(p["shape"]), jnp.float32) for p in ports]


def layout(net, cfg: Config) -> Layout:
    opt = OPTIMIZERS[cfg.optimizer["name"]]
    names = tuple(p.name for p in net.params)
    shapes = {p.name: tuple(int(d) for d in p.shape) for p in net.params}
    sites = active_sites(net, cfg)
    B, classes = cfg.batch, net.classes
    params = [_port(f"params/{n}", "param", shapes[n]) for n in names]
    state = [_port(f"opt/{s}/{n}", "opt_state", shapes[n]) for s in opt.slots for n in names]
    x = _port("x", "batch_x", (B,) + tuple(int(d) for d in net.layer.x[1:]))
    masks = [_port(f"site/{s}", "drop_mask", (B,), keep=float(net.keep.get(s, 1.0))) for s in sites]
    scalars = [_port("lr", "lr", ())]
    if opt.corrections:
        scalars += [_port("bc1", "bias_correction1", ()), _port("bc2", "bias_correction2", ())]
    step_in = params + state + [x, _port("y", "batch_y", (B, classes))] + masks + scalars
    step_out = ([{"name": p["name"], "role": "param", "shape": p["shape"], "dtype": "f32"} for p in params]
                + [{"name": s["name"], "role": "opt_state", "shape": s["shape"], "dtype": "f32"} for s in state]
                + [{"name": "loss", "role": "loss", "shape": [], "dtype": "f32"}])
    fwd_in = params + [x] + masks
    fwd_out = [{"name": "logits", "role": "logits", "shape": [B, classes], "dtype": "f32"}]
    return Layout(names, opt.slots, sites, step_in, step_out, fwd_in, fwd_out)


# -- the functions -----------------------------------------------------------------------------


def _global_norm_clip(grads: dict, c: float) -> dict:
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in grads.values()))
    scale = c / jnp.maximum(norm, c)
    return {k: g * scale for k, g in grads.items()}


def loss_and_gradients(net, cfg: Config):
    """``(params, x, y, masks) -> (loss, grads)``: the loss's forward and backward and
    the network's certified backward, clipped when ``cfg.clip`` is set. The gradient
    the step applies, and what the differential oracle compares with ``jax.grad``."""
    loss_layer = softmax_xent((cfg.batch, net.classes))

    def fn(params, x, y, masks):
        logits = net.forward(params, x, masks)
        loss = loss_layer.forward({}, logits, y)
        dlogits, _ = loss_layer.backward({}, logits, y, jnp.ones((), logits.dtype))
        _, grads = net.backward(params, x, masks, dlogits)
        if cfg.clip:
            grads = _global_norm_clip(grads, cfg.clip)
        return loss, grads
    return fn


def train_step(net, cfg: Config, lay: Layout | None = None, gradients=None):
    """``step(*args) -> (*new_params, *new_state, loss)`` in the order of ``layout``.
    ``gradients`` replaces ``loss_and_gradients`` (the plain-JAX reference does)."""
    lay = lay or layout(net, cfg)
    opt = OPTIMIZERS[cfg.optimizer["name"]]
    hyper = cfg.optimizer
    decayed = set(net.decayed)
    grad_fn = gradients or loss_and_gradients(net, cfg)
    n, k, s = len(lay.params), len(lay.slots), len(lay.sites)

    def step(*args):
        params = dict(zip(lay.params, args[:n]))
        state = [dict(zip(lay.params, args[n + j * n:n + (j + 1) * n])) for j in range(k)]
        x, y = args[n + k * n], args[n + k * n + 1]
        masks = dict(zip(lay.sites, args[n + k * n + 2:n + k * n + 2 + s]))
        lr, *bc = args[n + k * n + 2 + s:]
        loss, grads = grad_fn(params, x, y, masks)
        new_params, new_state = [], [[] for _ in range(k)]
        for name in lay.params:
            wd = hyper.get("weight_decay", 0.0) if name in decayed else 0.0
            p, st = opt.update(params[name], grads[name], tuple(sl[name] for sl in state), lr, wd, bc or None, hyper)
            new_params.append(p)
            for j in range(k):
                new_state[j].append(st[j])
        return (*new_params, *[a for sl in new_state for a in sl], loss)
    return step


def forward(net, cfg: Config, lay: Layout | None = None):
    """``forward(*params, x, *masks) -> logits``."""
    lay = lay or layout(net, cfg)
    n = len(lay.params)

    def fwd(*args):
        params = dict(zip(lay.params, args[:n]))
        return net.forward(params, args[n], dict(zip(lay.sites, args[n + 1:])))
    return fwd


__all__ = ["Config", "Layout", "build_network", "layout", "loss_and_gradients", "train_step", "forward",
           "active_sites"]
