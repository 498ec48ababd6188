"""Lowering a step to StableHLO text and writing a rendered directory (untrusted).

``emit`` lowers the train step and the forward with ``jax.jit(...).lower`` (every
argument kept, in the layout's order; zero pads folded into convolutions, ``fold``)
and checks what the runtime relies on: the
module parses and verifies, it has exactly one public ``@main``, whose arguments
are the layout's inputs (shapes and float32) and whose results are the layout's
outputs as several results (no tuple). ``write`` puts ``train_step.mlir``,
``forward.mlir`` and ``manifest.json`` into a directory.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import jax

from verigrad.frontends.stablehlo import StableHLOError, parse, signature
from verigrad.run.manifest import from_dict, sha256_file

from . import step as S

FILES = {"train_step": "train_step.mlir", "forward": "forward.mlir"}


@dataclass
class Emitted:
    """The two modules' text, the layout, and what was checked of each."""
    net: object
    config: S.Config
    layout: S.Layout
    text: dict                       # "train_step" / "forward" -> text
    checks: dict = field(default_factory=dict)


def lower(fn, structs) -> str:
    """``fn`` lowered to StableHLO text, every argument kept (an unused input would
    otherwise disappear from ``@main`` and shift the manifest's order), with the zero
    padding of its convolutions' operands folded into the convolutions (``fold``: the
    forms ``jax.jit(jax.grad)`` emits, which XLA runs without padded copies)."""
    from .fold import fold_pads
    return jax.jit(fold_pads(fn), keep_unused=True).lower(*structs).as_text()


def check_module(text: str, inputs: list, outputs: list, path: str) -> list:
    """The checks the runtime relies on; returns them in words, raises
    ``StableHLOError`` naming the first that fails."""
    parsed = parse(text, path)
    publics = []
    with parsed.context:
        for name, fn in parsed.functions.items():
            vis = fn.attributes["sym_visibility"] if "sym_visibility" in fn.attributes else None
            if vis is None or str(vis).strip('"') == "public":
                publics.append(name)
    if publics != ["main"]:
        raise StableHLOError(f"{path}: expected one public function @main, found {', '.join('@' + p for p in publics) or 'none'}")
    sig = signature(parsed)
    for what, got, want in (("argument", sig.inputs, inputs), ("result", sig.outputs, outputs)):
        if len(got) != len(want):
            raise StableHLOError(f"{path}: @main has {len(got)} {what}s, the layout has {len(want)}")
        for k, (s, p) in enumerate(zip(got, want)):
            if list(s.shape) != p["shape"] or s.dtype != p["dtype"]:
                raise StableHLOError(f"{path}: {what} {k} ({p['name']}) of @main is {s}, expected "
                                     f"shape {p['shape']} {p['dtype']}")
    return ["parses and verifies (jaxlib MLIR, StableHLO dialect)",
            "exactly one public function, @main",
            f"{len(inputs)} arguments with the manifest's shapes and dtypes",
            f"{len(outputs)} results (no tuple) with the manifest's shapes and dtypes"]


def emit(net, cfg: S.Config, step=None) -> Emitted:
    """Lower the train step and the forward of ``net`` under ``cfg`` and check both.
    ``step(net, cfg, layout)`` builds the step function (default ``step.train_step``;
    the plain-JAX reference passes its own)."""
    lay = S.layout(net, cfg)
    step = step or S.train_step
    text = {"train_step": lower(step(net, cfg, lay), lay.structs(lay.step_inputs)),
            "forward": lower(S.forward(net, cfg, lay), lay.structs(lay.forward_inputs))}
    checks = {"train_step": check_module(text["train_step"], lay.step_inputs, lay.step_outputs, FILES["train_step"]),
              "forward": check_module(text["forward"], lay.forward_inputs, lay.forward_outputs, FILES["forward"])}
    return Emitted(net, cfg, lay, text, checks)


def manifest(em: Emitted, directory: Path, certificates: dict) -> dict:
    """The manifest of an emitted step whose files are in ``directory``."""
    lay, cfg = em.layout, em.config
    module = {}
    for key, ins, outs in (("train_step", lay.step_inputs, lay.step_outputs),
                           ("forward", lay.forward_inputs, lay.forward_outputs)):
        module[key] = {"file": FILES[key], "sha256": sha256_file(directory / FILES[key]), "inputs": ins,
                       "outputs": outs, "checked": em.checks[key]}
    params = [{"name": f"params/{p.name}", "shape": [int(d) for d in p.shape], "init": str(p.init),
               "decay": bool(p.decay)} for p in em.net.params]
    return {"net": cfg.net, "batch": cfg.batch, "dtype": "f32", "optimizer": dict(cfg.optimizer),
            "label_smoothing": cfg.label_smoothing, "drop_path": cfg.drop_path,
            "train_step": module["train_step"], "forward": module["forward"], "params": params,
            "certificates": certificates,
            "render": {**cfg.as_dict(), "sites": list(lay.sites), "jax": jax.__version__}}


def write_modules(em: Emitted, directory) -> Path:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for key, name in FILES.items():
        (out / name).write_text(em.text[key])
    return out


def write_manifest(em: Emitted, directory, certificates: dict) -> dict:
    out = Path(directory)
    obj = manifest(em, out, certificates)
    from_dict(obj, out)                 # the schema the runtime reads, and the files' sha256
    tmp = out / "manifest.json.tmp"
    tmp.write_text(json.dumps(obj, indent=1))
    tmp.replace(out / "manifest.json")
    return obj


__all__ = ["Emitted", "emit", "lower", "check_module", "manifest", "write_modules", "write_manifest", "FILES"]
