"""Seconds to certify each layer, the ViT block (with the seed-003 theorems) and each
network, in a fresh process per item (no proof is shared between items), median of 3.
Translation validation stays on (the witness check is the test suite's, off here as in
``verigrad render``). Wall seconds, and the process's CPU seconds (user + system, all
its threads) beside them: on a shared machine wall time counts the waits for a core.

Goals on a 2-core machine (issue 13): the ViT block, seed theorems included, at most
5 s; the whole ViT (4 blocks) at most 10 s. Printed with the ratio to its goal (wall).
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys

from rich.console import Console
from rich.table import Table

RUNS = 3
GOALS = {"vit block (+ seed 003)": 5.0, "network vit": 10.0}

SCRIPT = r'''
import sys, time, importlib, jax
t0, c0 = time.perf_counter(), time.process_time()
kind, name = sys.argv[1], sys.argv[2]
if kind == "layer":
    from verigrad.nn import report
    ok = report.layer_records([name])[0].status == "PROVED"
elif kind == "network":
    from verigrad.nn import compose
    from verigrad.nn.nets import NETS
    (B,) = jax.export.symbolic_shape("B")
    ok = compose.certify(NETS[name](B).layer).proved
else:
    from verigrad.nn import compose, seed003
    V = importlib.import_module("verigrad.nn.nets.vit")
    (B,) = jax.export.symbolic_shape("B")
    ok = compose.certify(V.vit_block((B, 17, 64), 4, 128)).proved and all(
        t.status == ("REFUTED" if t.name.startswith("control") else "PROVED") for t in seed003.theorems())
print(("OK" if ok else "NOT PROVED"), time.perf_counter() - t0, time.process_time() - c0)
'''


def measure(kind, name):
    times, cpus, status = [], [], "?"
    env = {k: v for k, v in os.environ.items() if k != "VERIGRAD_WITNESS"}
    for _ in range(RUNS):
        out = subprocess.run([sys.executable, "-c", SCRIPT, kind, name], capture_output=True, text=True, env=env)
        if out.returncode:
            return "error: " + out.stderr.strip().splitlines()[-1], float("nan"), float("nan")
        status, t, c = out.stdout.split()[-3:]
        times.append(float(t))
        cpus.append(float(c))
    return status, statistics.median(times), statistics.median(cpus)


def main(argv=None):
    items = [("layer", n) for n in ("dense", "layer_norm", "softmax", "conv2d_s2_same", "max_pool", "mhsa",
                                    "transformer_mlp_tanh", "patch_embed")]
    items += [("block", "vit block (+ seed 003)")] + [("network", n) for n in ("mlp", "cnn", "resnet", "vit")]
    only = argv if argv is not None else sys.argv[1:]       # e.g. "block" "network vit" "layer mhsa"
    if only:
        items = [(k, n) for k, n in items if k in only or f"{k} {n}" in only]
    table = Table(title=f"certification time, seconds (median of {RUNS}, fresh process each; excludes start-up)")
    for col in ("item", "status", "median s", "CPU s", "goal s", "ratio to goal"):
        table.add_column(col)
    for kind, name in items:
        label = name if kind == "block" else f"{kind} {name}"
        status, t, c = measure(kind, name)
        goal = GOALS.get(label)
        table.add_row(label, status, f"{t:.2f}", f"{c:.2f}", f"{goal:.0f}" if goal else "",
                      f"{t / goal:.2f}" if goal else "")
    Console().print(table)


if __name__ == "__main__":
    main()
