"""``make demo``: verigrad's main job end to end, on its defaults, in a few minutes.

1. Certify the ViT (4 blocks, two drop-path sites each) for every batch size: each
   layer's backward proved by the kernel, the network's by construction.
2. Render its train step (forward, loss, certified backward, AdamW) to StableHLO and
   tie the emitted text to the math: the kernel checks every result of ``@main``.
3. Train on scikit-learn's digits through XLA, running exactly the tied text.
4. Print the test accuracy and the certificate summary.

``python -m verigrad.demo --kernel`` shows the kernel on its own instead: backward
passes of dense, softmax, layer norm and attention proved for all sizes, and wrong
ones refuted with a counterexample.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from verigrad.certify import showcase
from verigrad.certify.vjp import certify_equal

# The ViT recipe (benchmarks/accuracy.py trains longer): about 97 % test accuracy on
# digits in 40 epochs, half a minute on 2 cores.
EPOCHS, LR, WARMUP_EPOCHS = 40, 3e-3, 2.0


def pipeline(console: Console, net: str, out: Path, epochs: int) -> dict:
    """Certify, render and tie, train: the summary as a dict (``ok`` says whether
    every certificate came out PROVED / CHECKED and training ran)."""
    from verigrad.render import render_and_tie
    from verigrad.render.command import ProgressBars, print_summary
    from verigrad.run import manifest, train

    t0 = time.perf_counter()
    console.rule(f"[bold]1-2. certify the {net} for every batch size, render its train step, tie the text to the math")
    console.print("The network's backward is certified by construction from its layers' kernel certificates; "
                  "the emitted StableHLO is re-imported and each result of @main checked by the kernel.")
    with ProgressBars() as progress:
        directory, tie = render_and_tie(net, out, batch=64, opt="adamw", drop_path=0.1, progress=progress,
                                        certify=True)
    print_summary(directory, tie)
    m = manifest.load(directory)
    pieces = {k: m.certificates[k]["status"] for k in ("network_backward", "loss_backward")}

    console.rule(f"[bold]3. train on digits for {epochs} epochs (XLA, exactly the tied text)")
    summary = None
    if tie.ok:
        cfg = train.Config(epochs=epochs, lr=LR, warmup_epochs=WARMUP_EPOCHS)
        summary = train.Trainer(m, cfg, progress=True).run()
        console.print(f"test accuracy [bold]{summary.test_accuracy:.2%}[/] after {summary.epochs} epochs "
                      f"({summary.steps} steps, {summary.seconds:.1f} s)")
    else:
        console.print("[red]not trained: the render tie failed")

    console.rule("[bold]4. summary")
    table = Table()
    for col in ("piece", "status", "detail"):
        table.add_column(col)
    net_entry = m.certificates["network_backward"]
    table.add_row(f"{net} backward", pieces["network_backward"],
                  f"{sum(v == 'PROVED' for v in net_entry['wrt'].values())}/{len(net_entry['wrt'])} inputs and "
                  f"parameters, for all {', '.join(net_entry['sizes'])}")
    table.add_row("loss backward (softmax xent)", pieces["loss_backward"], "label smoothing, mean over the batch")
    table.add_row("train_step.mlir, forward.mlir", tie.status, escape(tie.summary()))
    if summary is not None:
        table.add_row("training", "done", f"test accuracy {summary.test_accuracy:.2%}, final loss {summary.loss:.3f}")
    console.print(table)
    console.print(f"files in {directory}; {time.perf_counter() - t0:.0f} s in all")
    ok = all(v == "PROVED" for v in pieces.values()) and tie.ok and summary is not None
    return {"net": net, "directory": str(directory), "certificates": pieces, "tie": tie.status,
            "test_accuracy": None if summary is None else summary.test_accuracy, "ok": ok}


def kernel_showcase(console: Console) -> bool:
    """Prove the showcase claims and refute the mutants; True if all behaved."""
    console.rule("[bold]verigrad kernel showcase: backward passes proved for ALL sizes")
    table = Table(show_lines=False)
    for col in ("claim", "status", "ms", "axioms"):
        table.add_column(col)
    ok = True
    claims = showcase.proved_claims() + showcase.composite_ln_attention()
    with console.status("proving ...") as status:
        for claim in claims:
            status.update(f"proving {claim.name} ...")
            cert = certify_equal(claim.name, claim.lhs, claim.rhs, claim.argument)
            ok &= cert.status == "PROVED"
            style = "green" if cert.status == "PROVED" else "red"
            table.add_row(claim.name, f"[{style}]{cert.status}", f"{cert.seconds * 1000:.1f}", str(len(cert.axioms)))
    console.print(table)
    dense_dx = showcase.dense()[0]
    cert = certify_equal(dense_dx.name, dense_dx.lhs, dense_dx.rhs, dense_dx.argument)
    console.print("[bold]dense dx, as the kernel states it:")
    console.print(cert.theorem.statement(), soft_wrap=True, markup=False, highlight=False)   # brackets are indices
    console.print("[bold]rests on:[/] " + ", ".join(cert.axioms))
    console.rule("[bold]wrong backward passes are refuted")
    for claim in showcase.mutant_claims():
        cert = certify_equal(claim.name, claim.lhs, claim.rhs, claim.argument)
        ok &= cert.status == "REFUTED"
        console.print(f"[red]{cert.status}[/] {escape(claim.name)}: {escape(str(cert.counterexample))}")
    console.print("[bold green]all claims behaved as expected" if ok else "[bold red]something unexpected happened")
    return ok


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m verigrad.demo", description=__doc__.split("\n\n")[0])
    p.add_argument("--net", default="vit", choices=["mlp", "cnn", "resnet", "vit"])
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("--out", type=Path, default=None, help="where to render (default .verigrad-cache/demo-NET)")
    p.add_argument("--kernel", action="store_true", help="the kernel showcase instead of the pipeline")
    p.add_argument("--json", action="store_true", help="also print the summary as one JSON line")
    args = p.parse_args(argv)
    if args.epochs < 1:
        p.error(f"--epochs must be >= 1, got {args.epochs}")
    console = Console()
    if args.kernel:
        return 0 if kernel_showcase(console) else 1
    result = pipeline(console, args.net, args.out or Path(".verigrad-cache") / f"demo-{args.net}", args.epochs)
    if args.json:
        print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
