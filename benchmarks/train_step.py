"""Train-step benchmark: executing the StableHLO text vs ``jax.jit`` of the same step.

The plain-JAX reference MLP (64 -> 128 -> residual 128 -> 10, one drop-path site,
AdamW, batch 64; ``verigrad.run.reference``) is lowered to text once. Each round times
``STEPS`` consecutive steps of (a) the text compiled by ``verigrad.run.backend``
(argument checks included, state kept on the device and fed back), (b)
``jax.jit(step)`` with ``jax.value_and_grad`` inside, and (c) the text under IREE when
installed; the rounds alternate so machine noise hits all alike. Printed: median
microseconds per step and the ratio to ``jax.jit`` (goal: at most 1.0).
"""
from __future__ import annotations

import statistics
import tempfile
import time

import jax
import numpy as np
from rich.console import Console
from rich.table import Table

from verigrad.run import backend, manifest, reference

ROUNDS, STEPS = 15, 50


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
    """A function running STEPS steps, feeding the new state back; returns seconds."""
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
        jax.block_until_ready(out[-1]) if not hasattr(out[-1], "to_host") else out[-1].to_host()
        return (time.perf_counter() - t0) / STEPS
    return run


def main():
    with tempfile.TemporaryDirectory() as tmp:
        m = manifest.load(reference.write(tmp, batch=64, hidden=128))
        text = m.text(m.train_step)
        args = _arguments(m)
        spec = reference.params()
        jitted = jax.jit(reference.make_step(spec, "adamw"))
        dev_args = [jax.device_put(a) for a in args]
        runners = {"jax.jit(value_and_grad)": _runner(jitted, m, dev_args)}
        exe = backend.compile(text, "xla")
        runners["text via XLA (verigrad.run.backend)"] = _runner(exe, m, [exe.put(a, k) for k, a in enumerate(args)])
        if backend.iree_available() is None:
            iexe = backend.compile(text, "iree")
            runners["text via IREE llvm-cpu"] = _runner(iexe, m, [iexe.put(a, k) for k, a in enumerate(args)])
        for run in runners.values():      # warm up (first calls allocate)
            run()
        times = {name: [] for name in runners}
        for _ in range(ROUNDS):
            for name, run in runners.items():
                times[name].append(run())
    ref = statistics.median(times["jax.jit(value_and_grad)"])
    table = Table(title=f"MLP train step, batch 64, AdamW: median of {ROUNDS} rounds x {STEPS} steps")
    table.add_column("executor")
    table.add_column("us / step", justify="right")
    table.add_column("ratio to jax.jit", justify="right")
    for name, ts in times.items():
        med = statistics.median(ts)
        table.add_row(name, f"{med * 1e6:.1f}", f"{med / ref:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
