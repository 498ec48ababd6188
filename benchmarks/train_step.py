"""Train-step benchmark: the rendered module against ``jax.jit(jax.value_and_grad)``.

For each network (batch 64, AdamW) the rendered ``train_step.mlir`` (certified
backward; compiled by ``verigrad.run.backend``, argument checks included, state kept
on the device and fed back) is timed against ``jax.jit`` of the plain-JAX reference
step (``verigrad.render.autodiff``: the same forward and optimizer, gradients by
``jax.value_and_grad``), and against IREE when it is installed. Each round times
``STEPS`` consecutive steps of each executor in turn, so machine noise hits all
alike. Printed: median microseconds per step and the ratio to ``jax.jit`` (goal: at
most 1.0).

    python benchmarks/train_step.py            # mlp cnn resnet vit
    python benchmarks/train_step.py mlp vit
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time

import jax
import numpy as np
from rich.console import Console
from rich.table import Table

from verigrad.render import autodiff, configure, render
from verigrad.run import backend, manifest

ROUNDS, STEPS, BATCH = 11, 20, 64
REFERENCE = "jax.jit(value_and_grad)"


def _arguments(m):
    rng = np.random.default_rng(0)
    args = []
    for p in m.train_step.inputs:
        x = rng.standard_normal(p.shape) * 0.1
        if p.role in ("opt_state", "lr", "bias_correction1", "bias_correction2", "drop_mask"):
            x = np.abs(x) + (0.5 if p.role != "lr" else 1e-3)
        args.append(np.asarray(x, np.float32))
    return args


def _runner(call, m, args):
    """Runs STEPS steps, feeding the new state back; returns seconds per step."""
    ts = m.train_step
    back = [(k, [j for j, q in enumerate(ts.outputs) if q.name == p.name][0])
            for k, p in enumerate(ts.inputs) if p.role in ("param", "opt_state")]
    state = list(args)

    def run():
        t0 = time.perf_counter()
        for _ in range(STEPS):
            out = call(*state)
            for k, j in back:
                state[k] = out[j]
        last = out[-1]
        last.to_host() if hasattr(last, "to_host") else jax.block_until_ready(last)
        return (time.perf_counter() - t0) / STEPS
    return run


def measure(name: str, directory) -> dict:
    """Median seconds per step of each executor for network ``name``."""
    d = render(name, directory, batch=BATCH, opt="adamw", drop_path=0.1, tie=False)
    m = manifest.load(d)
    net, cfg = configure(name, BATCH, opt="adamw", drop_path=0.1)
    args = _arguments(m)
    names = [p.name for p in m.train_step.inputs]
    jitted = jax.jit(autodiff.reference_step(net, cfg))
    runners = {REFERENCE: _runner(jitted, m, [jax.device_put(a) for a in args])}
    exe = backend.compile(m.text(m.train_step), "xla", names)
    runners["rendered text via XLA"] = _runner(exe, m, [exe.put(a, k) for k, a in enumerate(args)])
    if backend.iree_available() is None:
        iexe = backend.compile(m.text(m.train_step), "iree", names)
        runners["rendered text via IREE"] = _runner(iexe, m, [iexe.put(a, k) for k, a in enumerate(args)])
    for run in runners.values():        # warm up: first calls allocate
        run()
    times = {key: [] for key in runners}
    for _ in range(ROUNDS):
        for key, run in runners.items():
            times[key].append(run())
    return {key: statistics.median(ts) for key, ts in times.items()}


def main(argv=None) -> int:
    nets = (argv if argv is not None else sys.argv[1:]) or ["mlp", "cnn", "resnet", "vit"]
    table = Table(title=f"train step, batch {BATCH}, AdamW: median of {ROUNDS} rounds x {STEPS} steps")
    for col in ("net", "executor", "us / step", f"ratio to {REFERENCE}"):
        table.add_column(col, justify="right" if col not in ("net", "executor") else "left")
    with tempfile.TemporaryDirectory() as tmp:
        for name in nets:
            med = measure(name, f"{tmp}/{name}")
            for key, t in med.items():
                table.add_row(name, key, f"{t * 1e6:.0f}", f"{t / med[REFERENCE]:.2f}")
    Console(width=max(Console().width, 100)).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
