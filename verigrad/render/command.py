"""``verigrad render``: render a network's train step, or tie a rendered directory again."""
from __future__ import annotations

import json
import sys
from pathlib import Path

NAME = "render"
HELP = "render a network's train step to StableHLO (train_step.mlir, forward.mlir, manifest.json) and tie it"


def add_arguments(p):
    p.add_argument("target", metavar="NET_OR_DIR",
                   help="a network to render (mlp, cnn, resnet, vit, or FILE.py:NAME defined with "
                        "verigrad.nn.builder), or a rendered directory to tie again")
    p.add_argument("--out", metavar="DIR", help="where to write the rendered files (default: NET)")
    p.add_argument("--opt", choices=["sgd", "momentum", "adamw"], default="adamw")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--drop-path", type=float, dest="drop_path", default=0.1,
                   help="drop-path rate (networks without sites ignore it; 0 renders no mask inputs)")
    p.add_argument("--clip", type=float, help="clip gradients to this global norm")
    p.add_argument("--label-smoothing", type=float, dest="label_smoothing", default=0.1)
    p.add_argument("--weight-decay", type=float, dest="weight_decay", help="override the optimizer's weight decay")
    p.add_argument("--no-tie", action="store_true", help="skip the render tie (the manifest then says UNKNOWN)")
    p.add_argument("--no-certify", action="store_true", dest="no_certify",
                   help="skip certifying the network's and the loss's backward for the manifest (UNKNOWN there)")
    p.add_argument("--json", action="store_true", help="print only a JSON summary")


def run(args) -> int:
    from verigrad.cli import UsageError
    from verigrad.frontends.stablehlo import StableHLOError
    from verigrad.run.manifest import ManifestError
    from . import check, render_and_tie

    target = Path(args.target)
    progress = None if args.json else ProgressBars()
    try:
        if (target / "manifest.json").is_file():
            with progress or _null():
                tie = check(target, progress=progress)
            directory = target
        else:
            from verigrad.nn.builder import is_spec, split_spec
            from verigrad.nn.nets import NETS
            if args.target not in NETS and not is_spec(args.target):
                raise UsageError(f"{args.target}: neither a rendered directory (no manifest.json) nor a network "
                                 f"({', '.join(NETS)}, or FILE.py:NAME)")
            if args.batch < 1:
                raise UsageError(f"--batch must be >= 1, got {args.batch}")
            hyper = {} if args.weight_decay is None else {"weight_decay": args.weight_decay}
            directory = Path(args.out or (Path(split_spec(args.target)[0]).stem if is_spec(args.target)
                                          else args.target))
            with progress or _null():
                directory, tie = render_and_tie(args.target, directory, batch=args.batch, opt=args.opt,
                                                drop_path=args.drop_path, clip=args.clip,
                                                label_smoothing=args.label_smoothing, tie=not args.no_tie,
                                                progress=progress, certify=not args.no_certify, **hyper)
    except (ManifestError, StableHLOError, ValueError) as e:
        raise UsageError(str(e)) from None
    summary = _summary(directory, tie)
    if args.json:
        print(json.dumps(summary))
    else:
        print_summary(directory, tie)
    if tie is not None and not tie.ok:
        print(f"verigrad render: {directory}: the render tie failed: {tie.summary()}", file=sys.stderr)
        return 1
    return 0


def _summary(directory, tie) -> dict:
    out = {"directory": str(directory), "status": tie.status if tie is not None else "UNKNOWN",
           "certificates": {k: v.get("status", "UNKNOWN") for k, v in _manifest_certificates(directory).items()}}
    if tie is not None:
        out["modules"] = {k: {"results": len(v["results"]), "checked": sum(r["status"] == "CHECKED" for r in v["results"].values()),
                              "cuts": v["cuts"], "obligations": v["obligations"], "kernel_seconds": v["kernel_seconds"],
                              "seconds": v["seconds"], "xla": v.get("xla_check", {}).get("status", "UNKNOWN")}
                          for k, v in tie.certificate().items() if isinstance(v, dict) and "results" in v}
        if not tie.ok:
            out["failures"] = [{"module": k, "result": r.name, "status": r.status, "reason": r.reason}
                               for k, r in tie.failures()]
    return out


def print_summary(directory, tie):
    from rich.console import Console
    from rich.table import Table
    console = Console()
    console.print(f"[bold]rendered[/] {directory}: train_step.mlir, forward.mlir, manifest.json")
    certificates = _manifest_certificates(directory)
    for piece in ("network_backward", "loss_backward"):
        entry = certificates.get(piece, {})
        status = entry.get("status", "UNKNOWN")
        style = "green" if status == "PROVED" else "yellow" if status == "UNKNOWN" else "red"
        what = f"{sum(v == 'PROVED' for v in entry.get('wrt', {}).values())}/{len(entry.get('wrt', {}))} proved, " \
            f"for all {', '.join(entry.get('sizes', [])) or 'sizes'}" if "wrt" in entry else entry.get("note", "")
        console.print(f"{piece}: [{style}]{status}[/] ({what})")
    if tie is None:
        console.print("[yellow]not tied[/] (--no-tie): the manifest records the tie as UNKNOWN")
        return
    table = Table(title="render tie: each result of @main against the certified math, at the rendered sizes; "
                        "XLA's run of the text against it")
    for col in ("module", "results", "status", "cuts", "obligations", "kernel s", "XLA", "total s"):
        table.add_column(col, justify="left" if col in ("module", "status", "XLA") else "right")
    for key, entry in tie.certificate().items():
        if not (isinstance(entry, dict) and "results" in entry):
            continue
        statuses = [r["status"] for r in entry["results"].values()]
        status = next((s for s in ("REFUTED", "UNKNOWN") if s in statuses), "CHECKED")
        style = "green" if status == "CHECKED" else "red"
        xla = entry.get("xla_check", {})
        agrees = xla.get("status") == "AGREES"
        table.add_row(key, str(len(statuses)), f"[{style}]{status}", str(entry["cuts"]), str(entry["obligations"]),
                      f"{entry['kernel_seconds']:.2f}",
                      f"[{'green' if agrees else 'red'}]{xla.get('status', 'UNKNOWN').lower()}", f"{entry['seconds']:.2f}")
    console.print(table)
    for key, r in tie.failures()[:10]:
        console.print(f"[red]{r.status}[/] {key} {r.name}: {r.reason}")


def _manifest_certificates(directory) -> dict:
    try:
        return json.loads((Path(directory) / "manifest.json").read_text()).get("certificates", {})
    except (OSError, ValueError):
        return {}


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


class ProgressBars:
    """A rich progress bar per tied module: ``progress(what, done, total)``."""

    def __enter__(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        self.p = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), transient=True)
        self.p.__enter__()
        self.tasks = {}
        return self

    def __call__(self, what: str, done: int, total: int):
        if what not in self.tasks:
            self.tasks[what] = self.p.add_task(what, total=total)
        self.p.update(self.tasks[what], completed=done)

    def __exit__(self, *exc):
        self.p.__exit__(*exc)
        return False
