"""``verigrad train``: train a rendered network on digits or on your data.

Targets: a rendered directory, a built-in net (rendered first), or a network file
``FILE.py:NAME`` (``verigrad.nn.builder``, rendered first). Data: ``--data`` (an
``.npz`` with ``x`` and ``y``, or ``FILE.py:NAME``; ``verigrad.run.dataset``) is
read and checked before anything is rendered or run. Devices and processes
(``--device``, ``--devices``, ``--num-processes``, ``--process-id``,
``--coordinator``; ``verigrad.run.distributed``) are set before jax starts. The
trained parameters go to ``--params`` (default ``DIR/params.safetensors``)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

NAME = "train"
HELP = ("train a rendered network (a directory with manifest.json, a net name, or FILE.py:NAME) on digits or "
        "--data; a rendered directory is tied again first, and trained only if its exact bytes tie")
NETS = ("mlp", "cnn", "resnet", "vit")
DEFAULT_LR = {"adamw": 2e-3, "momentum": 0.05, "sgd": 0.1}


def add_arguments(p):
    from verigrad.options import at_least, positive, within
    p.add_argument("target", metavar="NET_OR_DIR",
                   help=f"a rendered directory (manifest.json, train_step.mlir, forward.mlir), or a net to render "
                        f"first ({', '.join(NETS)}, or FILE.py:NAME defined with verigrad.nn.builder), or 'reference' "
                        "for the plain-JAX reference MLP (not certified)")
    p.add_argument("--dataset", default="digits", choices=["digits"])
    p.add_argument("--data", metavar="FILE", help="train on this data instead of digits: an .npz with arrays x "
                   "(examples) and y (labels 0..C-1), optionally x_test and y_test, or FILE.py:NAME giving arrays "
                   "or batches (without a test split, 20%% is held out)")
    p.add_argument("--test", metavar="FILE", help="the test split: an .npz with x and y")
    p.add_argument("--params", metavar="FILE", help="write the trained parameters here, .safetensors or .npz "
                   "(default DIR/params.safetensors)")
    p.add_argument("--epochs", type=at_least(1), default=10, help="epochs to train (default 10)")
    p.add_argument("--batch", type=at_least(1), help="batch size (a rendered directory fixes it)")
    p.add_argument("--opt", choices=["sgd", "momentum", "adamw"], help="optimizer (a rendered directory fixes it)")
    p.add_argument("--lr", type=positive(), help="peak learning rate (default: 2e-3 adamw, 0.05 momentum, 0.1 sgd)")
    p.add_argument("--schedule", choices=["cosine", "constant"], default="cosine")
    p.add_argument("--drop-path", type=within(0, 1, high_open=True), dest="drop_path", help="drop-path rate (a rendered directory fixes it)")
    p.add_argument("--seed", type=at_least(0), default=0, help="seed of the initialization, shuffles and masks")
    p.add_argument("--backend", choices=["xla", "iree"], default="xla")
    p.add_argument("--device", choices=["cpu", "gpu"], help="where to run (default: jax's default, a GPU if one "
                   "is there); gpu needs pip install -e '.[cuda]'")
    p.add_argument("--devices", type=at_least(1), default=1, help="data-parallel over this many devices of each process "
                   "(xla; on the CPU verigrad sets jax_num_cpu_devices itself)")
    p.add_argument("--num-processes", type=at_least(1), default=1, dest="num_processes",
                   help="data-parallel over this many processes (jax.distributed; each runs this command with its "
                        "own --process-id; on the CPU the gradient all-reduce runs over gloo)")
    p.add_argument("--process-id", type=at_least(0), dest="process_id", help="this process's index, 0 .. N-1")
    p.add_argument("--coordinator", metavar="HOST:PORT", help="where process 0 listens for the others")
    p.add_argument("--ckpt", metavar="DIR", help="write a checkpoint here after every epoch")
    p.add_argument("--resume", action="store_true", help="continue from the checkpoint in --ckpt")
    p.add_argument("--out", metavar="DIR", help="where to render a net given by name (default: "
                   ".verigrad-cache/NET-KEY, KEY a hash of the options, reused when it is already there, as "
                   "`verigrad render NET` writes it)")
    p.add_argument("--json", action="store_true", help="no progress bar; print only the JSON summary")


def _render(args, usage):
    """The directory of a net given by name: ``--out``, or the cache folder for these
    options (``verigrad.render.cache``, shared with ``verigrad render``), rendered,
    certified and tied unless a complete render is already there."""
    from verigrad.render import TieFailed, cache, render
    from . import manifest
    opts = {"batch": args.batch or 64, "opt": args.opt or "adamw",
            "drop_path": 0.1 if args.drop_path is None else args.drop_path}
    if args.target == "reference":
        from . import reference
        out = Path(args.out or Path(".verigrad-cache") / "reference")
        return reference.write(out, opts["batch"], opt=opts["opt"], drop_path=opts["drop_path"])
    out = Path(args.out) if args.out else cache.directory(args.target, **opts)
    if not args.out and cache.rendered(out):
        try:                    # reused as it is; ensure_tied ties its exact bytes again before training
            manifest.load(out)
            return out
        except manifest.ManifestError:
            pass                # an interrupted or damaged render: render it again
    try:                    # rendered, certified and tied, as `verigrad render` does
        return Path(render(args.target, out, certify=True, **opts))
    except TieFailed as e:
        raise usage(f"{e} (not trained)") from None


def _check_paths(args, named: bool):
    """Every path the run will write or read, checked before any work."""
    from verigrad.options import output_file, output_folder
    from verigrad.errors import UsageError
    from . import checkpoint
    if args.out:
        if not named:
            from verigrad.errors import CommandLineError
            raise CommandLineError(f"--out is where a net given by name is rendered; {args.target} is not one")
        output_folder(args.out, "--out")
    if args.ckpt:
        output_folder(args.ckpt, "--ckpt", create=not args.resume)
        if args.resume:
            try:
                checkpoint.load(args.ckpt)
            except checkpoint.CheckpointError as e:
                raise UsageError(f"--resume: {e}") from None
    if args.params:
        output_file(args.params, "--params")


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

    from verigrad.nn.builder import is_spec
    from . import dataset, distributed, params_io

    from verigrad.errors import CommandLineError
    target = Path(args.target)
    spec = is_spec(args.target)
    named = spec or args.target in NETS + ("reference",)     # a net given by name, never a folder of that name
    if args.resume and not args.ckpt:
        raise CommandLineError("--resume needs --ckpt DIR (where the checkpoint is)")
    if args.params and Path(args.params).suffix not in params_io.SUFFIXES:
        raise CommandLineError(f"--params {args.params}: should end in .safetensors or .npz")
    if args.test and not args.data:
        raise CommandLineError("--test needs --data (digits has its own test split)")
    if not (named or target.is_dir()):
        raise UsageError(f"{args.target}: neither a rendered directory nor a net ({', '.join(NETS)}, or FILE.py:NAME)")
    if not named and not (target / "manifest.json").is_file():
        raise UsageError(f"{args.target}: not a rendered directory (no manifest.json; render one with "
                         f"`verigrad render NET --out {args.target}`)")
    _check_paths(args, named)
    try:                        # before jax starts: the platform, the CPU device count, the other processes
        placement = distributed.setup(args.device, args.devices, args.coordinator, args.num_processes,
                                      args.process_id)
        user_data = dataset.load(args.data, args.test) if args.data else None     # checked before any render or step
    except (distributed.PlacementError, dataset.DataError) as e:
        if isinstance(e, CommandLineError):     # options that do not go together: exit 2
            raise
        raise UsageError(str(e)) from None
    reference = False           # the plain-JAX reference step, written now: trained as such, labelled uncertified
    if spec:
        if placement.process_count > 1:
            raise UsageError("with --num-processes, train a rendered directory (verigrad render FILE.py:NAME --out "
                             "DIR first), so that every process trains the same files")
        try:
            directory = _render(args, UsageError)
        except ValueError as e:                 # NetworkError: one line naming the piece
            raise UsageError(str(e)) from None
    elif not named:
        directory = target
    else:
        if placement.process_count > 1:
            raise UsageError(f"with --num-processes, train a rendered directory (verigrad render {args.target} "
                             "--out DIR first), so that every process trains the same files")
        directory = _render(args, UsageError)
        reference = args.target == "reference"
    try:
        m = manifest.load(directory)
        for flag, value, rendered in (("--batch", args.batch, m.batch), ("--opt", args.opt, m.optimizer["name"]),
                                      ("--drop-path", args.drop_path, m.drop_path)):
            if value is not None and value != rendered and not named:
                raise UsageError(f"{flag} {value} differs from {rendered}, which {directory}/manifest.json was "
                                 f"rendered with; render again to change it")
        if isinstance(user_data, dataset.Arrays):       # against the network, before the tie and any step
            user_data = user_data.fitted(m.train_step.role("batch_x")[0].shape[1:], m.classes, m.batch)
        if not reference:
            m = ensure_tied(directory, progress=not args.json)
        lr = args.lr if args.lr is not None else DEFAULT_LR[m.optimizer["name"]]
        cfg = train.Config(epochs=args.epochs, lr=lr, schedule=args.schedule, seed=args.seed, backend=args.backend,
                           dataset=user_data.source if user_data is not None else args.dataset, devices=args.devices)
        trainer = train.Trainer(m, cfg, args.ckpt, args.resume, progress=not args.json and placement.primary,
                                data=user_data, placement=placement)
        summary = trainer.run()
        written = trainer.save_params(args.params or Path(directory) / "params.safetensors")
        summary.params = str(written) if written is not None else None
    except NotTied as e:
        print(f"verigrad train: {e}", file=sys.stderr)
        return 1
    except (manifest.ManifestError, checkpoint.CheckpointError, StableHLOError, backend.ArgumentError,
            backend.BackendUnavailable, params_io.ParamsError, ValueError) as e:
        raise UsageError(str(e)) from None
    except train.Diverged as e:
        print(f"verigrad train: {e}", file=sys.stderr)
        return 1
    result = summary.as_dict()
    result.pop("history")
    result["render_tie"] = "not tied (plain-JAX reference)" if reference else "CHECKED"
    if not args.json and placement.primary:
        note = " (plain-JAX reference step, not certified)" if reference else ""
        test = trainer._test_split()
        acc = (f"test accuracy {summary.test_accuracy:.2%} on {len(test.y_train)} examples of {summary.data}"
               if test is not None else f"no test split ({summary.data})")
        print(f"{acc} after {summary.epochs} epochs ({summary.steps} steps, {summary.seconds:.1f} s, {cfg.backend}, "
              f"{summary.devices}){note}; parameters in {summary.params}")
    print(json.dumps(result))
    return 0
