"""A plain-JAX train step with a manifest: the stand-in for a rendered step (untrusted
reference, never on the certified training path).

A small residual MLP on 8x8 digits,
``h = relu(x W1 + b1);  h = h + mask * relu(h W2 + b2);  logits = h W3 + b3``,
with one drop-path site (``mask`` is the per-example ``tensor<B>`` of the manifest),
softmax cross-entropy against smoothed targets, gradients by ``jax.value_and_grad``
and an SGD / Nesterov-momentum / AdamW update. ``write(out_dir, ...)`` lowers it to
``train_step.mlir`` and ``forward.mlir`` and writes the ``manifest.json`` the
renderer writes, so the runtime, the training loop, the benchmarks and the tests can
run without the renderer, and the accuracy benchmark has its JAX reference.
"""
from __future__ import annotations

import json
from pathlib import Path

import jax
import jax.numpy as jnp


from .manifest import sha256_file

HYPER = {"adamw": {"name": "adamw", "weight_decay": 0.05, "betas": [0.9, 0.999], "eps": 1e-8},
         "momentum": {"name": "momentum", "momentum": 0.9, "nesterov": True, "weight_decay": 0.0},
         "sgd": {"name": "sgd", "weight_decay": 0.0}}


def params(inputs=64, hidden=128, classes=10) -> list:
    """The manifest's ``params`` list: name, shape, initialiser, weight decay."""
    def dense(name, n, m, init="he_normal"):
        return [{"name": f"params/{name}/W", "shape": [n, m], "init": init, "decay": True},
                {"name": f"params/{name}/b", "shape": [m], "init": "zeros", "decay": False}]
    return dense("fc1", inputs, hidden) + dense("block0", hidden, hidden) + dense("head", hidden, classes, "lecun_normal")


def forward(p: dict, x, mask):
    """Logits of the residual MLP; ``mask`` scales the residual branch per example."""
    h = jax.nn.relu(x @ p["params/fc1/W"] + p["params/fc1/b"])
    h = h + mask[:, None] * jax.nn.relu(h @ p["params/block0/W"] + p["params/block0/b"])
    return h @ p["params/head/W"] + p["params/head/b"]


def loss_fn(p, x, y, mask):
    """Mean softmax cross-entropy against the (smoothed) target distributions ``y``."""
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(forward(p, x, mask)), axis=-1))


def opt_state_names(names, opt) -> list:
    slots = {"adamw": ("m", "v"), "momentum": ("mom",), "sgd": ()}[opt]
    return [f"opt/{s}/{n.removeprefix('params/')}" for s in slots for n in names]


def update(opt, hyper, decay, p, g, state, lr, bc1, bc2):
    """One optimizer step on one parameter; returns (new p, new state tuple)."""
    wd = hyper.get("weight_decay", 0.0) if decay else 0.0
    if opt == "sgd":
        return p - lr * (g + wd * p), ()
    if opt == "momentum":
        mu = hyper["momentum"]
        (buf,) = state
        buf = mu * buf + g
        return p - lr * (g + mu * buf + wd * p), (buf,)
    b1, b2 = hyper["betas"]
    m, v = state
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    step = (m / bc1) / (jnp.sqrt(v / bc2) + hyper["eps"])
    return p - lr * (step + wd * p), (m, v)


def make_step(spec: list, opt: str = "adamw", hyper: dict | None = None):
    """``step(*params, *opt_state, x, y, mask, lr[, bc1, bc2]) -> (*params, *opt_state, loss)``
    in the manifest's argument order."""
    hyper = hyper or HYPER[opt]
    names = [s["name"] for s in spec]
    decay = {s["name"]: s["decay"] for s in spec}
    n, k = len(names), len(opt_state_names(names, opt)) // max(len(names), 1)

    def step(*args):
        p = dict(zip(names, args[:n]))
        states = [args[n + j * n: n + (j + 1) * n] for j in range(k)]
        rest = args[n + k * n:]
        x, y, mask, lr = rest[:4]
        bc1, bc2 = rest[4:6] if opt == "adamw" else (None, None)
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y, mask)
        new_p, new_s = [], [[] for _ in range(k)]
        for i, name in enumerate(names):
            q, st = update(opt, hyper, decay[name], p[name], grads[name], tuple(s[i] for s in states), lr, bc1, bc2)
            new_p.append(q)
            for j in range(k):
                new_s[j].append(st[j])
        return (*new_p, *[a for s in new_s for a in s], loss)
    return step


def make_forward(spec: list):
    names = [s["name"] for s in spec]

    def fwd(*args):
        return forward(dict(zip(names, args[:len(names)])), args[len(names)], args[len(names) + 1])
    return fwd


def _port(name, role, shape, **kw):
    return {"name": name, "role": role, "shape": list(shape), "dtype": "f32", **kw}


def write(out_dir, batch: int = 64, hidden: int = 128, opt: str = "adamw", drop_path: float = 0.1,
          label_smoothing: float = 0.1, inputs: int = 64, classes: int = 10) -> Path:
    """Lower the step and the forward to text and write them with ``manifest.json``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spec = params(inputs, hidden, classes)
    names = [s["name"] for s in spec]
    shapes = {s["name"]: tuple(s["shape"]) for s in spec}
    ostate = opt_state_names(names, opt)
    oshape = [shapes["params/" + o.split("/", 2)[2]] for o in ostate]
    site = {"name": "site/block0/mlp", "keep": 1.0 - drop_path}
    ins = ([_port(n, "param", shapes[n]) for n in names] + [_port(o, "opt_state", s) for o, s in zip(ostate, oshape)]
           + [_port("x", "batch_x", (batch, inputs)), _port("y", "batch_y", (batch, classes)),
              _port(site["name"], "drop_mask", (batch,), keep=site["keep"]), _port("lr", "lr", ())])
    if opt == "adamw":
        ins += [_port("bc1", "bias_correction1", ()), _port("bc2", "bias_correction2", ())]
    outs = ([{"name": n, "role": "param"} for n in names] + [{"name": o, "role": "opt_state"} for o in ostate]
            + [{"name": "loss", "role": "loss"}])
    f32 = lambda shape: jax.ShapeDtypeStruct(tuple(shape), jnp.float32)  # noqa: E731
    step_text = jax.jit(make_step(spec, opt)).lower(*[f32(p["shape"]) for p in ins]).as_text()
    fwd_ins = [_port(n, "param", shapes[n]) for n in names] + [
        _port("x", "batch_x", (batch, inputs)), _port(site["name"], "drop_mask", (batch,), keep=site["keep"])]
    fwd_text = jax.jit(make_forward(spec)).lower(*[f32(p["shape"]) for p in fwd_ins]).as_text()
    (out / "train_step.mlir").write_text(step_text)
    (out / "forward.mlir").write_text(fwd_text)
    manifest = {
        "net": "reference-mlp", "batch": batch, "dtype": "f32", "optimizer": HYPER[opt],
        "label_smoothing": label_smoothing, "drop_path": drop_path,
        "train_step": {"file": "train_step.mlir", "sha256": sha256_file(out / "train_step.mlir"),
                       "inputs": ins, "outputs": outs},
        "forward": {"file": "forward.mlir", "sha256": sha256_file(out / "forward.mlir"),
                    "inputs": fwd_ins, "outputs": [{"name": "logits", "role": "logits"}]},
        "params": spec, "certificates": {},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return out


__all__ = ["write", "params", "forward", "loss_fn", "make_step", "make_forward", "update", "HYPER"]

