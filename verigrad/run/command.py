"""``verigrad train``: train a rendered network on digits."""
from __future__ import annotations

import json
import sys
from pathlib import Path

NAME = "train"
HELP = ("train a rendered network (a directory with manifest.json, or a net name) on digits; "
        "a rendered directory is tied again first, and trained only if its exact bytes tie")
NETS = ("mlp", "cnn", "resnet", "vit")
DEFAULT_LR = {"adamw": 2e-3, "momentum": 0.05, "sgd": 0.1}


def add_arguments(p):
    p.add_argument("target", metavar="NET_OR_DIR",
                   help=f"a rendered directory (manifest.json, train_step.mlir, forward.mlir), or a net to render "
                        f"first ({', '.join(NETS)}), or 'reference' for the plain-JAX reference MLP (not certified)")
    p.add_argument("--dataset", default="digits", choices=["digits"])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, help="batch size (a rendered directory fixes it)")
    p.add_argument("--opt", choices=["sgd", "momentum", "adamw"], help="optimizer (a rendered directory fixes it)")
    p.add_argument("--lr", type=float, help="peak learning rate (default: 2e-3 adamw, 0.05 momentum, 0.1 sgd)")
    p.add_argument("--schedule", choices=["cosine", "constant"], default="cosine")
    p.add_argument("--drop-path", type=float, dest="drop_path", help="drop-path rate (a rendered directory fixes it)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=["xla", "iree"], default="xla")
    p.add_argument("--devices", type=int, default=1, help="data-parallel over this many devices (xla)")
    p.add_argument("--ckpt", metavar="DIR", help="write a checkpoint here after every epoch")
    p.add_argument("--resume", action="store_true", help="continue from the checkpoint in --ckpt")
    p.add_argument("--out", metavar="DIR", help="where to render a net given by name (default .verigrad-cache/NET)")
    p.add_argument("--json", action="store_true", help="no progress bar; print only the JSON summary")


def _render(args, usage):
    out = Path(args.out or Path(".verigrad-cache") / args.target)
    opts = {"batch": args.batch or 64, "opt": args.opt or "adamw",
            "drop_path": 0.1 if args.drop_path is None else args.drop_path}
    if args.target == "reference":
        from . import reference
        return reference.write(out, opts["batch"], opt=opts["opt"], drop_path=opts["drop_path"])
    from verigrad.render import TieFailed, render
    try:                    # rendered, certified and tied, as `verigrad render` does
        return Path(render(args.target, out, certify=True, **opts))
    except TieFailed as e:
        raise usage(f"{e} (not trained)") from None


def ensure_tied(directory, progress: bool):
    """The directory's manifest with the module texts pinned, once those exact bytes
    tie to the certified math (``verigrad.render.tie.ensure_tied``); ``NotTied``
    otherwise."""
    from verigrad.render.tie import ensure_tied as tie_again
    if not progress:
        return tie_again(directory)
    from verigrad.render.command import ProgressBars
    with ProgressBars() as bars:
        return tie_again(directory, progress=bars)


def run(args) -> int:
    from verigrad.cli import UsageError
    from verigrad.frontends.stablehlo import StableHLOError
    from verigrad.render.tie import NotTied
    from . import backend, checkpoint, manifest, train

    target = Path(args.target)
    reference = False           # the plain-JAX reference step, written now: trained as such, labelled uncertified
    if target.exists():
        directory = target if target.is_dir() else target.parent
    elif args.target in NETS + ("reference",):
        directory = _render(args, UsageError)
        reference = args.target == "reference"
    else:
        raise UsageError(f"{args.target}: neither a rendered directory nor a net ({', '.join(NETS)})")
    if args.resume and not args.ckpt:
        raise UsageError("--resume needs --ckpt DIR (where the checkpoint is)")
    if args.epochs < 1:
        raise UsageError(f"--epochs must be >= 1, got {args.epochs}")
    try:
        m = manifest.load(directory)
        for flag, value, rendered in (("--batch", args.batch, m.batch), ("--opt", args.opt, m.optimizer["name"]),
                                      ("--drop-path", args.drop_path, m.drop_path)):
            if value is not None and value != rendered and target.exists():
                raise UsageError(f"{flag} {value} differs from {rendered}, which {directory}/manifest.json was "
                                 f"rendered with; render again to change it")
        if not reference:
            m = ensure_tied(directory, progress=not args.json)
        lr = args.lr if args.lr is not None else DEFAULT_LR[m.optimizer["name"]]
        cfg = train.Config(epochs=args.epochs, lr=lr, schedule=args.schedule, seed=args.seed, backend=args.backend,
                           dataset=args.dataset, devices=args.devices)
        trainer = train.Trainer(m, cfg, args.ckpt, args.resume, progress=not args.json)
        summary = trainer.run()
    except NotTied as e:
        print(f"verigrad train: {e}", file=sys.stderr)
        return 1
    except (manifest.ManifestError, checkpoint.CheckpointError, StableHLOError, backend.ArgumentError,
            backend.BackendUnavailable, ValueError) as e:
        raise UsageError(str(e)) from None
    except train.Diverged as e:
        print(f"verigrad train: {e}", file=sys.stderr)
        return 1
    result = summary.as_dict()
    result.pop("history")
    result["render_tie"] = "not tied (plain-JAX reference)" if reference else "CHECKED"
    if not args.json:
        note = " (plain-JAX reference step, not certified)" if reference else ""
        print(f"test accuracy {summary.test_accuracy:.2%} on {len(trainer.split.y_test)} digits after "
              f"{summary.epochs} epochs ({summary.steps} steps, {summary.seconds:.1f} s, {cfg.backend}){note}")
    print(json.dumps(result))
    return 0
