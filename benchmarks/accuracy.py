"""Digits test accuracy of the certified training path against a plain-JAX reference.

Each network is trained twice in the same run, by the same training loop
(``verigrad.run.train``) from the same initialisation, data order and drop-path
masks: once with its rendered step (the certified backward, tied to the math by the
kernel), once with the same step whose gradient comes from ``jax.value_and_grad``
(``verigrad.render.autodiff``). The bars (issue 6): MLP >= 97 %, CNN >= 98 %,
ViT >= 95 % on the fixed 360-image test split, each within 1 point of its
reference. The tiny ResNet is reported without a bar (``--all``).

    python benchmarks/accuracy.py            # mlp, cnn, vit
    python benchmarks/accuracy.py vit --all  # any subset; --all adds the resnet

Exit status 1 if a bar is missed.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from verigrad.render import autodiff, render
from verigrad.run import manifest, train

# Tuned for a few minutes per network on 2 cores (AdamW, cosine schedule with warmup).
RUNS = {
    "mlp": {"bar": 0.97, "batch": 32, "opt": "adamw", "lr": 5e-3, "epochs": 30, "drop_path": 0.0},
    "cnn": {"bar": 0.98, "batch": 32, "opt": "adamw", "lr": 5e-3, "epochs": 30, "drop_path": 0.0},
    "vit": {"bar": 0.95, "batch": 64, "opt": "adamw", "lr": 3e-3, "epochs": 80, "drop_path": 0.1},
    "resnet": {"bar": None, "batch": 32, "opt": "adamw", "lr": 3e-3, "epochs": 30, "drop_path": 0.0},
}
WITHIN = 0.01
WARMUP_EPOCHS = 2.0


def run(name: str, directory: Path, console: Console, seed: int = 0) -> dict:
    spec = RUNS[name]
    common = {"batch": spec["batch"], "opt": spec["opt"], "drop_path": spec["drop_path"]}
    t0 = time.perf_counter()
    certified = render(name, directory / "certified", **common)
    tie = manifest.load(certified).certificates["render_tie"]["status"]
    render_s = time.perf_counter() - t0
    reference = autodiff.render_reference(name, directory / "reference", **common)
    cfg = train.Config(epochs=spec["epochs"], lr=spec["lr"], seed=seed, warmup_epochs=WARMUP_EPOCHS)
    out = {"net": name, "tie": tie, "render_seconds": round(render_s, 1), **spec}
    for label, d in (("certified", certified), ("reference", reference)):
        console.print(f"[bold]{name}[/]: training the {label} step ({spec['epochs']} epochs)")
        s = train.Trainer(manifest.load(d), cfg, progress=True).run()
        out[label] = s.test_accuracy
        out[f"{label}_seconds"] = round(s.seconds, 1)
    bar = spec["bar"]
    out["pass"] = (tie == "CHECKED" and (bar is None or out["certified"] >= bar)
                   and abs(out["certified"] - out["reference"]) <= WITHIN)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("nets", nargs="*", choices=[*RUNS, []], help="networks (default: mlp cnn vit)")
    p.add_argument("--all", action="store_true", help="also the tiny ResNet (no bar)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    nets = args.nets or ["mlp", "cnn", "vit"]
    if args.all and "resnet" not in nets:
        nets.append("resnet")
    console = Console(width=max(Console().width, 120))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in nets:
            rows.append(run(name, Path(tmp) / name, console, args.seed))
    table = Table(title="digits test accuracy (360 images): certified rendered step vs jax.value_and_grad reference")
    for col in ("net", "tie", "epochs", "certified", "reference", "difference", "bar", "train s (cert / ref)", "ok"):
        table.add_column(col, justify="left" if col in ("net", "tie", "ok") else "right")
    for r in rows:
        bar = f">= {r['bar']:.0%}" if r["bar"] is not None else "-"
        table.add_row(r["net"], r["tie"], str(r["epochs"]), f"{r['certified']:.2%}", f"{r['reference']:.2%}",
                      f"{(r['certified'] - r['reference']) * 100:+.2f} pt", bar,
                      f"{r['certified_seconds']:.0f} / {r['reference_seconds']:.0f}",
                      "[green]yes" if r["pass"] else "[red]NO")
    console.print(table)
    print(json.dumps(rows))
    return 0 if all(r["pass"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
