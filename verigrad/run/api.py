r"""Training and prediction from Python, on numpy arrays or an iterator of batches.

    from verigrad.run.api import fit, predict

    result = fit("my_net.py:net", (x, y), epochs=5, batch=32, out="build/my_net")
    logits = predict("build/my_net", x_new)

``fit(target, data, ...)``: ``target`` is a rendered directory, a built-in net name,
a network file ``FILE.py:NAME`` or a ``verigrad.nn.builder.Model``; a target that is
not a directory is rendered into ``out`` first (certified, and its text tied, as
``verigrad render`` does); a directory is tied again before training, as ``verigrad
train DIR`` does. ``data`` is ``(x, y)``, ``(x, y, x_test, y_test)``, a dict with
those keys, ``verigrad.run.dataset.Arrays`` / ``Stream``, an iterable of ``(x, y)``
batches or a function returning one (called each epoch), or ``None`` (digits); it is
checked against the network before the first step (``verigrad.run.dataset``). The
trained parameters are written to ``params`` (default ``OUT/params.safetensors``).
Returns a ``FitResult``: the summary, the parameters (numpy, by manifest name), the
directory and the parameter file.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class FitResult:
    summary: object               # verigrad.run.train.Summary
    params: dict                  # "params/NAME" -> numpy array
    directory: Path
    params_file: Path | None


def _directory(target, out, batch, opt, drop_path) -> Path:
    from verigrad.nn.builder import Model
    if isinstance(target, (str, Path)) and (Path(target) / "manifest.json").is_file():
        return Path(target)
    if isinstance(target, Model):
        raise ValueError("give the model as FILE.py:NAME (a rendered directory must be able to load it again to "
                         "tie its text), or render it first")
    from verigrad.nn.builder import is_spec, load
    from verigrad.render import render
    name = load(str(target)).name if is_spec(str(target)) else str(target)
    out = Path(out) if out is not None else Path(".verigrad-cache") / name
    return Path(render(str(target), out, batch=batch, opt=opt, drop_path=drop_path, certify=True))


def fit(target, data=None, *, epochs: int = 10, batch: int = 64, opt: str = "adamw", lr: float | None = None,
        drop_path: float = 0.1, schedule: str = "cosine", seed: int = 0, out=None, params=None,
        steps_per_epoch: int | None = None, devices: int = 1, progress: bool = False) -> FitResult:
    """Render (if needed), tie, and train ``target`` on ``data``; see the module's doc."""
    from verigrad.render.tie import ensure_tied
    from . import dataset, train
    from .command import DEFAULT_LR
    from .distributed import current
    placement = current(devices)
    if data is not None and not isinstance(data, (dataset.Arrays, dataset.Stream)):
        data = dataset.from_python(data, "data", hold_out=True)
    if isinstance(data, dataset.Stream) and steps_per_epoch is not None:
        data.steps = steps_per_epoch
    directory = _directory(target, out, batch, opt, drop_path)
    m = ensure_tied(directory)
    cfg = train.Config(epochs=epochs, lr=lr if lr is not None else DEFAULT_LR[m.optimizer["name"]],
                       schedule=schedule, seed=seed, dataset=getattr(data, "source", "digits"), devices=devices)
    trainer = train.Trainer(m, cfg, progress=progress, data=data, placement=placement)
    summary = trainer.run()
    written = trainer.save_params(params or directory / "params.safetensors")
    summary.params = str(written) if written is not None else None
    arrays = {p.name: a for p, a in zip(m.params, [trainer.parameters()[p.name] for p in m.params])}
    return FitResult(summary, arrays, directory, written)


def predict(directory, x, params=None):
    """Logits of the tied ``forward.mlir`` of ``directory`` at ``x`` (numpy)."""
    from .predict import predict as run
    return run(directory, x, params)


__all__ = ["fit", "predict", "FitResult"]
