"""Train-step benchmark: the rendered module against ``jax.jit(jax.value_and_grad)``.

For each network (batch 64, AdamW, drop path 0.1) the rendered ``train_step.mlir``
(certified backward; tied to the certified math before it is timed, unless
``--no-tie``; compiled by ``verigrad.run.backend``, argument checks included, state
kept on the device and fed back) is timed against ``jax.jit`` of the plain-JAX
reference step (``verigrad.render.autodiff``: the same forward and optimizer,
gradients by ``jax.value_and_grad``), and against IREE when it is installed. Each
round times consecutive steps of each executor in turn (at least ``--min-round``
seconds of them, at least 20 steps), so machine noise hits all alike. Printed: median
microseconds per step, the ratio to ``jax.jit`` (the median over the rounds of each
round's ratio: the two executors of a round ran one after the other, so a busy moment
of a shared machine cancels) and its goal (issue 13: at most 1.0 for every net, on the
CPU and on a GPU).

The device is JAX's default (a GPU where jaxlib has one). ``--gpu-sizes`` adds the
sizes that make a GPU work (issue 13): mlp and resnet at batch 4096, cnn and vit at
1024, and a ViT of width 192, depth 12 (3 heads, MLP 768) at batch 512.

    python benchmarks/train_step.py                  # mlp cnn resnet vit, batch 64
    python benchmarks/train_step.py mlp vit --rounds 21
    python benchmarks/train_step.py --gpu-sizes --no-tie
"""
from __future__ import annotations

import argparse
import math
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

ROUNDS, MIN_STEPS, BATCH = 21, 20, 64
MIN_ROUND_S = 0.05
REFERENCE = "jax.jit(value_and_grad)"
GOAL = 1.0
NETS = ("mlp", "cnn", "resnet", "vit")
VIT_192 = {"width": 192, "heads": 3, "depth": 12, "hidden": 768}
GPU_SIZES = [("mlp", 4096, None), ("cnn", 1024, None), ("resnet", 4096, None), ("vit", 1024, None),
             ("vit", 512, VIT_192)]


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
    """``run(steps)`` runs ``steps`` steps, feeding the new state back; returns seconds
    per step."""
    ts = m.train_step
    back = [(k, [j for j, q in enumerate(ts.outputs) if q.name == p.name][0])
            for k, p in enumerate(ts.inputs) if p.role in ("param", "opt_state")]
    state = list(args)

    def run(steps=MIN_STEPS):
        t0 = time.perf_counter()
        for _ in range(steps):
            out = call(*state)
            for k, j in back:
                state[k] = out[j]
        last = out[-1]
        last.to_host() if hasattr(last, "to_host") else jax.block_until_ready(last)
        return (time.perf_counter() - t0) / steps
    return run


def measure(name: str, directory, batch: int = BATCH, options=None, tie: bool = True, rounds: int = ROUNDS,
            min_round: float = MIN_ROUND_S) -> dict:
    """Median seconds per step of each executor for network ``name``, and the tie's
    status of the text timed."""
    d = render(name, directory, batch=batch, opt="adamw", drop_path=0.1, tie=tie, options=options)
    m = manifest.load(d)
    tied = m.certificates.get("render_tie", {}).get("status", "UNKNOWN") if tie else "not tied"
    net, cfg = configure(name, batch, opt="adamw", drop_path=0.1, options=options)
    args = _arguments(m)
    names = [p.name for p in m.train_step.inputs]
    jitted = jax.jit(autodiff.reference_step(net, cfg))
    runners = {REFERENCE: _runner(jitted, m, [jax.device_put(a) for a in args])}
    exe = backend.compile(m.text(m.train_step), "xla", names)
    runners["rendered text via XLA"] = _runner(exe, m, [exe.put(a, k) for k, a in enumerate(args)])
    if backend.iree_available() is None:
        iexe = backend.compile(m.text(m.train_step), "iree", names)
        runners["rendered text via IREE"] = _runner(iexe, m, [iexe.put(a, k) for k, a in enumerate(args)])
    per_step = max(run(3) for run in runners.values())       # warm up (first calls allocate), and a size
    steps = max(MIN_STEPS, math.ceil(min_round / max(per_step, 1e-7)))
    times = {key: [] for key in runners}
    for r in range(rounds):
        order = list(runners.items())
        for key, run in (order if r % 2 == 0 else order[::-1]):
            times[key].append(run(steps))
    ref = times[REFERENCE]
    return {"medians": {key: statistics.median(ts) for key, ts in times.items()},
            "ratios": {key: statistics.median(t / r for t, r in zip(ts, ref)) for key, ts in times.items()},
            "tie": tied, "steps": steps}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nets", nargs="*", help=f"networks (default: {' '.join(NETS)})")
    ap.add_argument("--batch", type=int, default=BATCH)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--min-round", type=float, default=MIN_ROUND_S, metavar="S",
                    help="seconds of steps per executor per round, at least (default %(default)s)")
    ap.add_argument("--no-tie", dest="tie", action="store_false", help="time the text without tying it first")
    ap.add_argument("--gpu-sizes", action="store_true", help="add issue 13's GPU sizes (B 4096/1024, ViT-192 B 512)")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    configs = [(n, args.batch, None) for n in (args.nets or NETS)]
    if args.gpu_sizes:
        configs += [c for c in GPU_SIZES if not args.nets or c[0] in args.nets]
    dev = jax.devices()[0]
    table = Table(title=f"train step, AdamW, on {dev.platform} ({dev.device_kind}): median of {args.rounds} rounds "
                        f"(executors alternating)")
    for col in ("net", "batch", "executor", "us / step", f"ratio to {REFERENCE} (per round)", "goal", "text"):
        table.add_column(col, justify="left" if col in ("net", "executor", "text") else "right")
    over = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, batch, options) in enumerate(configs):
            label = name if options is None else f"{name} w{options['width']} d{options['depth']}"
            got = measure(name, f"{tmp}/{k}", batch, options, args.tie, args.rounds, args.min_round)
            med = got["medians"]
            for key, t in med.items():
                ratio = got["ratios"][key]
                goal = "" if key == REFERENCE else f"<= {GOAL:.1f}"
                style = "" if key == REFERENCE else ("green" if ratio <= GOAL else "red")
                if key == "rendered text via XLA":
                    over += ratio > GOAL
                table.add_row(label, str(batch), key, f"{t * 1e6:.0f}", f"[{style}]{ratio:.2f}" if style else f"{ratio:.2f}",
                              goal, got["tie"] if key != REFERENCE else "")
    console = Console(width=max(Console().width, 120))
    console.print(table)
    console.print(f"[red]{over} net(s) over the goal" if over else "[green]every net within the goal (rendered <= jax.jit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
