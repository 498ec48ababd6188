"""``verigrad render``: render a network's train step, or tie a rendered directory again."""
from __future__ import annotations

import json
import sys
from pathlib import Path

NAME = "render"
HELP = "render a network's train step to StableHLO (train_step.mlir, forward.mlir, manifest.json) and tie it"


RENDER_DEFAULTS = {"opt": "adamw", "batch": 64, "drop_path": 0.1, "label_smoothing": 0.1}


def add_arguments(p):
    from verigrad.options import at_least, positive, within
    p.add_argument("target", metavar="NET_OR_DIR",
                   help="a network to render (mlp, cnn, resnet, vit, or FILE.py:NAME defined with "
                        "verigrad.nn.builder), or a rendered directory to tie again")
    p.add_argument("--out", metavar="DIR", help="where to write the rendered files (default: "
                   ".verigrad-cache/NET-KEY, KEY a hash of the options, where `verigrad train NET` finds them)")
    p.add_argument("--opt", choices=["sgd", "momentum", "adamw"], help="optimizer (default adamw)")
    p.add_argument("--batch", type=at_least(1), help="batch size (default 64)")
    p.add_argument("--drop-path", type=within(0, 1, high_open=True), dest="drop_path",
                   help="drop-path rate in [0, 1) (default 0.1; networks without sites ignore it; 0 renders no "
                        "mask inputs)")
    p.add_argument("--clip", type=positive(), help="clip gradients to this global norm")
    p.add_argument("--label-smoothing", type=within(0, 1, high_open=True), dest="label_smoothing",
                   help="label smoothing in [0, 1) (default 0.1)")
    p.add_argument("--weight-decay", type=at_least(0.0, float), dest="weight_decay",
                   help="override the optimizer's weight decay")
    p.add_argument("--no-tie", action="store_true", help="skip the render tie (the manifest then says UNKNOWN)")
    p.add_argument("--no-certify", action="store_true", dest="no_certify",
                   help="skip certifying the network's and the loss's backward for the manifest (UNKNOWN there)")
    p.add_argument("--json", action="store_true", help="print only a JSON summary")


def _render_options(args) -> dict:
    """The rendering options, defaults filled in."""
    return {k: (getattr(args, k) if getattr(args, k) is not None else v) for k, v in RENDER_DEFAULTS.items()}


def run(args) -> int:
    from verigrad.errors import CommandLineError, UsageError
    from verigrad.frontends.stablehlo import StableHLOError
    from verigrad.options import output_folder
    from verigrad.run.manifest import ManifestError
    from . import cache, check, render_and_tie
    from verigrad.nn.builder import is_spec
    from verigrad.nn.nets import NETS

    target = Path(args.target)
    tie_again = (target / "manifest.json").is_file() and args.target not in NETS
    if tie_again:
        given = [f"--{k.replace('_', '-')}" for k in (*RENDER_DEFAULTS, "out", "clip", "weight_decay")
                 if getattr(args, k) is not None] + ["--no-tie"] * args.no_tie + ["--no-certify"] * args.no_certify
        if given:
            raise CommandLineError(f"{', '.join(given)}: options for rendering a network; {args.target} is a "
                                   "rendered directory, which is tied again as it is")
    elif args.target not in NETS and not is_spec(args.target):
        what = "a folder without manifest.json" if target.is_dir() else "no such folder"
        raise UsageError(f"{args.target}: neither a rendered directory ({what}) nor a network "
                         f"({', '.join(NETS)}, or FILE.py:NAME)")
    opts = _render_options(args)
    hyper = {} if args.weight_decay is None else {"weight_decay": args.weight_decay}
    if not tie_again:
        if is_spec(args.target) and not Path(args.target.rsplit(":", 1)[0] if not args.target.endswith(".py")
                                             else args.target).is_file():
            raise UsageError(f"{args.target}: no such network file")
        try:
            directory = Path(args.out) if args.out else cache.directory(
                args.target, clip=args.clip, hyper=hyper, certify=not args.no_certify, tie=not args.no_tie, **opts)
        except ValueError as e:
            raise UsageError(str(e)) from None
        output_folder(directory, "--out" if args.out else "")      # before any work
    progress = None if args.json else ProgressBars("tie" if tie_again else "render")
    try:
        if tie_again:
            with progress or _null():
                tie = check(target, progress=progress)
            directory = target
        else:
            with progress or _null():
                directory, tie = render_and_tie(args.target, directory, batch=opts["batch"], opt=opts["opt"],
                                                drop_path=opts["drop_path"], clip=args.clip,
                                                label_smoothing=opts["label_smoothing"], tie=not args.no_tie,
                                                progress=progress, certify=not args.no_certify, **hyper)
    except (ManifestError, StableHLOError, ValueError) as e:
        raise UsageError(str(e)) from None
    summary = _summary(directory, tie, recorded=tie_again)
    if args.json:
        print(json.dumps(summary))
    else:
        print_summary(directory, tie, recorded=tie_again)
    if tie is not None and not tie.ok:
        print(f"verigrad render: {directory}: the render tie failed: {tie.summary()}", file=sys.stderr)
        return 1
    return 0


def _summary(directory, tie, recorded: bool = False) -> dict:
    """``recorded``: the directory was tied again; its certificates of the backwards are
    the manifest's, written at render time and not re-made here (the tie's is this run's)."""
    certificates = {k: v.get("status", "UNKNOWN") for k, v in _manifest_certificates(directory).items()}
    if recorded and tie is not None:
        certificates["render_tie"] = tie.status
    out = {"directory": str(directory), "status": tie.status if tie is not None else "UNKNOWN",
           "certificates": certificates}
    if recorded:
        out["certificates_recorded"] = sorted(k for k in certificates if k != "render_tie")
    if tie is not None:
        out["modules"] = {k: {"results": len(v["results"]), "checked": sum(r["status"] == "CHECKED" for r in v["results"].values()),
                              "cuts": v["cuts"], "obligations": v["obligations"], "kernel_seconds": v["kernel_seconds"],
                              "seconds": v["seconds"], "xla": v.get("xla_check", {}).get("status", "UNKNOWN")}
                          for k, v in tie.certificate().items() if isinstance(v, dict) and "results" in v}
        if not tie.ok:
            out["failures"] = [{"module": k, "result": r.name, "status": r.status, "reason": r.reason}
                               for k, r in tie.failures()]
    return out


def print_summary(directory, tie, recorded: bool = False):
    from verigrad.console import cell, console, say, show_table
    out = console()
    say(out, f"rendered {directory}: train_step.mlir, forward.mlir, manifest.json")
    certificates = _manifest_certificates(directory)
    if recorded:
        say(out, "the backwards' certificates below are the manifest's, recorded at render time and not re-checked "
                 "here (render the network again to re-certify); the render tie is this run's")
    for piece in ("network_backward", "loss_backward"):
        entry = certificates.get(piece, {})
        status = entry.get("status", "UNKNOWN")
        what = f"{sum(v == 'PROVED' for v in entry.get('wrt', {}).values())}/{len(entry.get('wrt', {}))} proved, " \
            f"for all {', '.join(entry.get('sizes', [])) or 'sizes'}" if "wrt" in entry else entry.get("note", "")
        say(out, f"{piece}: {status} ({what})")
    if tie is None:
        say(out, "not tied (--no-tie): the manifest records the tie as UNKNOWN")
        return
    rows = []
    for key, entry in tie.certificate().items():
        if not (isinstance(entry, dict) and "results" in entry):
            continue
        statuses = [r["status"] for r in entry["results"].values()]
        status = next((s for s in ("REFUTED", "UNKNOWN") if s in statuses), "CHECKED")
        xla = entry.get("xla_check", {}).get("status", "UNKNOWN")
        rows.append([key, str(len(statuses)), cell(status, "green" if status == "CHECKED" else "red"),
                     str(entry["cuts"]), str(entry["obligations"]), f"{entry['kernel_seconds']:.2f}",
                     cell(xla.lower(), "green" if xla == "AGREES" else "red"), f"{entry['seconds']:.2f}"])
    say(out, "render tie: each result of @main against the certified math at the rendered sizes, "
             "and XLA's run of the text against it")
    show_table(out, ["module", "results", "status", "cuts", "obligations", "kernel s", "XLA", "total s"], rows,
               right=("results", "cuts", "obligations", "kernel s", "total s"))
    for key, r in tie.failures()[:10]:
        say(out, f"{r.status} {key} {r.name}: {r.reason}", "red")


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
    """Progress of the tie, ``progress(what, done, total)``: a transient bar per module
    on a terminal; otherwise a line when a module starts and one when it is done."""

    def __init__(self, label: str = "tie"):
        self.label = label

    def __enter__(self):
        from rich.console import Console
        self.tty = Console(stderr=True).is_terminal
        self.tasks = {}
        if self.tty:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
            self.p = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                              TimeElapsedColumn(), transient=True)
            self.p.__enter__()
        return self

    def __call__(self, what: str, done: int, total: int):
        if self.tty:
            if what not in self.tasks:
                self.tasks[what] = self.p.add_task(what, total=total)
            self.p.update(self.tasks[what], completed=done)
            return
        first = what not in self.tasks
        self.tasks[what] = done
        if first or (done >= total and self.tasks.get(("done", what)) is None):
            if done >= total:
                self.tasks[("done", what)] = True
            sys.stderr.write(f"{self.label}: {what} {done}/{total}\n")
            sys.stderr.flush()

    def __exit__(self, *exc):
        if self.tty:
            self.p.__exit__(*exc)
        return False
