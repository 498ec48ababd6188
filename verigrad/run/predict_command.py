"""``verigrad predict``: run a rendered directory's tied forward module on your data."""
from __future__ import annotations

import json
import sys
from pathlib import Path

NAME = "predict"
HELP = ("predict with a trained, rendered network: its forward.mlir, tied again first like `train DIR`, "
        "with DIR/params.safetensors (or --params) on --data")


def add_arguments(p):
    p.add_argument("directory", metavar="DIR", help="a rendered directory (manifest.json, forward.mlir) after training")
    p.add_argument("--data", metavar="FILE", required=True,
                   help="an .npz with an array x (and optionally y, to report accuracy), or FILE.py:NAME giving x "
                        "or (x, y)")
    p.add_argument("--params", metavar="FILE", help="the trained parameters, .safetensors or .npz "
                   "(default DIR/params.safetensors, then DIR/params.npz)")
    p.add_argument("--out", metavar="FILE", help="write logits and predicted labels here (.npz; "
                   "default DIR/predictions.npz)")
    p.add_argument("--device", choices=["cpu", "gpu"], help="where to run (default: jax's default)")
    p.add_argument("--json", action="store_true", help="print only a JSON summary")


def _inputs(spec):
    """``(x, y or None, source)`` from an .npz or a Python entry point."""
    from . import dataset
    spec = str(spec)
    if dataset._is_python(spec):
        import numpy as np
        obj = _python_object(spec)
        if isinstance(obj, np.ndarray):
            return obj, None, spec
        if isinstance(obj, dict) and "x" in obj:
            return obj["x"], obj.get("y"), spec
        if isinstance(obj, tuple) and len(obj) == 2:
            return obj[0], obj[1], spec
        raise dataset.DataError(f"{spec} gives a {type(obj).__name__}; expected an array x, (x, y) or a dict "
                                "with x")
    arrays = dataset.load_npz(spec, ("x",), ("y",))
    return arrays["x"], arrays.get("y"), Path(spec).name


def _python_object(spec):
    import importlib.util
    from . import dataset
    file, name = spec.rsplit(":", 1) if ":" in spec and not spec.endswith(".py") else (spec, "data")
    path = Path(file)
    if not path.is_file():
        raise dataset.DataError(f"{file}: no such file")
    ispec = importlib.util.spec_from_file_location("_verigrad_predict_data", path)
    module = importlib.util.module_from_spec(ispec)
    try:
        ispec.loader.exec_module(module)
        obj = getattr(module, name)
        return obj() if callable(obj) else obj
    except AttributeError:
        raise dataset.DataError(f"{path.name} defines no {name!r}") from None
    except Exception as e:  # noqa: BLE001 - the user's file
        raise dataset.DataError(f"{spec}: {type(e).__name__}: {' '.join(str(e).split())}") from None


def run(args) -> int:
    import numpy as np
    from verigrad.errors import UsageError
    from verigrad.frontends.stablehlo import StableHLOError
    from verigrad.render.tie import NotTied
    from . import backend, dataset, distributed, manifest, params_io
    from .predict import Predictor

    from verigrad.errors import CommandLineError
    directory = Path(args.directory)
    if args.out and Path(args.out).suffix != ".npz":
        raise CommandLineError(f"--out {args.out}: should end in .npz")
    if not (directory / "manifest.json").is_file():
        raise UsageError(f"{directory}: not a rendered directory (no manifest.json); render and train a network first")
    try:
        placement = distributed.setup(args.device)
        x, y, source = _inputs(args.data)                  # checked before anything is tied or run
        x = dataset.check_x(x, f"{source}: x")
        if y is not None:
            y = dataset.check_y(y, len(x), f"{source}: y")
        if args.params is None:
            from .predict import default_params
            default_params(directory)
        elif not Path(args.params).is_file():
            raise params_io.ParamsError(f"--params {args.params}: no such file")
        m = manifest.load(directory)                       # a broken manifest is bad input (exit 3), not a tie
        x = dataset.fit_shape(x, m.forward.role("batch_x")[0].shape[1:], f"{source}: x")     # before the tie
        if y is not None:
            dataset.check_range(y, m.classes, f"{source}: y")
        if args.json:
            pred = Predictor(directory, args.params, placement.local[0])
        else:
            from verigrad.render.command import ProgressBars
            with ProgressBars() as bars:
                pred = Predictor(directory, args.params, placement.local[0], progress=bars)
        logits = pred.logits(x)
    except NotTied as e:
        print(f"verigrad predict: {e}", file=sys.stderr)
        return 1
    except (dataset.DataError, params_io.ParamsError, distributed.PlacementError, manifest.ManifestError,
            StableHLOError, backend.ArgumentError, ValueError) as e:
        if isinstance(e, CommandLineError):
            raise
        raise UsageError(str(e)) from None
    if pred.trained_for_this is False:
        print(f"verigrad predict: note: {pred.params_path} was trained with another forward module (sha256 "
              f"{pred.metadata['forward_sha256'][:12]}...) than {directory}'s ({pred.m.forward.sha256[:12]}...); "
              "its names and shapes fit, and it is used as given", file=sys.stderr)
    labels = np.argmax(logits, axis=-1)
    out = Path(args.out) if args.out else directory / "predictions.npz"
    arrays = {"logits": logits, "labels": labels}
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        np.savez(out, **arrays)
    except OSError as e:
        raise UsageError(f"cannot write {out}: {e.strerror or e}") from None
    summary = {"directory": str(directory), "examples": int(len(x)), "classes": int(pred.classes),
               "params": str(pred.params_path), "params_trained_for_this_forward": pred.trained_for_this,
               "out": str(out), "render_tie": "CHECKED",
               "accuracy": float(np.mean(labels == y)) if y is not None else None}
    if not args.json:
        acc = f", accuracy {summary['accuracy']:.2%} against y" if y is not None else ""
        print(f"predicted {len(x)} examples of {source} with {directory}/forward.mlir (tied){acc}; wrote {out}")
    print(json.dumps(summary))
    return 0
