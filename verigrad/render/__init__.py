"""Train-step assembly and StableHLO emission (untrusted): one module per step; the
render tie re-imports the emitted text and has the kernel check it against the
certified math, so neither this printer nor JAX's lowering is trusted.

    from verigrad.render import render
    out = render("vit", "build/vit", batch=64, opt="adamw", drop_path=0.1)

writes ``train_step.mlir``, ``forward.mlir`` and ``manifest.json`` (the layout the
runtime reads, the hyperparameters, the sha256 of each file, the checks made and the
certificates) and ties both modules to the math (``tie``): CHECKED at the rendered
sizes, or an error naming the result that is not.

Modules: ``step`` (the train step as one JAX function and its argument layout),
``optimizers`` (SGD, Nesterov momentum, AdamW), ``emit`` (lowering, module checks,
files), ``programs`` and ``tie`` (the render tie), ``pieces`` (the certificates of
the network's and the loss's backward, for the manifest), ``autodiff`` (the plain-JAX
reference step, for tests and benchmarks only).
"""
from __future__ import annotations

from pathlib import Path

from .optimizers import OPTIMIZERS, hyperparameters
from .step import Config, build_network
from verigrad.errors import VerigradError


class TieFailed(VerigradError, RuntimeError):
    """The emitted text does not (provably) denote the certified math."""

    def __init__(self, tie, directory):
        self.tie, self.directory = tie, directory
        super().__init__(f"{directory}: the render tie failed: {tie.summary()}")


def configure(net, batch=None, opt: str = "adamw", drop_path: float = 0.0, clip=None,
              label_smoothing: float = 0.1, options=None, **hyper):
    """``(network, Config)`` for a net name of ``verigrad.nn.nets`` or a network file
    ``FILE.py:NAME`` (``verigrad.nn.builder``; the manifest records its path and
    sha256, so tying it again loads the same file and refuses a changed one) (built at
    ``batch``, default 64, with the builder's keyword ``options``) or a ``Network``
    (its own batch; ``drop_path > 0`` keeps its sites, 0 leaves them absent; the
    manifest then cannot rebuild it, so tying it again needs it passed back)."""
    if not 0 <= drop_path < 1:
        raise ValueError(f"drop-path rate must be in [0, 1), got {drop_path}")
    if clip is not None and not clip > 0:
        raise ValueError(f"the clipping norm must be positive, got {clip}")
    if not 0 <= label_smoothing < 1:
        raise ValueError(f"label smoothing must be in [0, 1), got {label_smoothing}")
    optimizer = hyperparameters(opt, **hyper)
    from verigrad.nn.builder import is_spec, load, source_of
    if is_spec(net):                    # FILE.py:NAME, a network defined with verigrad.nn.builder
        if options:
            raise ValueError("builder options are for a network given by name")
        source = source_of(net)
        model = load(source)
        cfg = Config(model.name, 64 if batch is None else int(batch), optimizer, float(drop_path), clip,
                     label_smoothing, {}, source)
        if cfg.batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        return build_network(cfg), cfg
    if isinstance(net, str):
        cfg = Config(net, 64 if batch is None else int(batch), optimizer, float(drop_path), clip, label_smoothing,
                     dict(options or {}))
        if cfg.batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        return build_network(cfg), cfg
    b = int(net.layer.x[0])
    if batch is not None and int(batch) != b:
        raise ValueError(f"network {net.name} is built for batch {b}, not {batch}")
    if options:
        raise ValueError("builder options are for a network given by name")
    # A ``Network`` object's layers are frozen to one traced program each (the zoo's too:
    # a user's function can pass for the zoo's, red team RT5-C1), so that what is
    # certified, emitted and tied is one program (red team RT4-B1: a backward that traced
    # differently inside the step was certified as one function and tied as another;
    # verigrad.nn.frozen).
    import dataclasses
    from verigrad.nn import frozen
    layer = frozen.freeze(net.layer)
    if layer is not net.layer:
        net = dataclasses.replace(net, layer=layer)
    return net, Config(net.name, b, optimizer, float(drop_path), clip, label_smoothing, None)


def render(net, out_dir, batch=None, opt: str = "adamw", drop_path: float = 0.0, clip=None,
           label_smoothing: float = 0.1, tie: bool = True, progress=None, options=None, certify: bool = False,
           **hyper) -> Path:
    """Render ``net`` (a name or a ``Network``) into ``out_dir`` and return it.

    With ``tie`` (the default) the written text is tied to the math before the
    manifest is written; a failure raises ``TieFailed`` (the manifest records it).
    With ``certify`` the manifest also carries the certificates of the network's and
    the loss's backward (``verigrad.render.pieces``; otherwise they read UNKNOWN).
    ``hyper`` overrides optimizer hyperparameters (``weight_decay=0.1``, ...);
    ``progress(what, done, total)`` is called as the work goes."""
    out, result = render_and_tie(net, out_dir, batch, opt, drop_path, clip, label_smoothing, tie, progress, options,
                                 certify, **hyper)
    if result is not None and not result.ok:
        raise TieFailed(result, out)
    return out


def render_and_tie(net, out_dir, batch=None, opt: str = "adamw", drop_path: float = 0.0, clip=None,
                   label_smoothing: float = 0.1, tie: bool = True, progress=None, options=None,
                   certify: bool = False, **hyper):
    """``render`` that returns ``(directory, Tie or None)`` instead of raising."""
    from . import emit as E
    from .tie import tie_files
    network, cfg = configure(net, batch, opt, drop_path, clip, label_smoothing, options, **hyper)
    em = E.emit(network, cfg)
    out = E.write_modules(em, out_dir)
    certificates = pending_certificates()
    if certify:
        from .pieces import certify_pieces
        certificates.update(certify_pieces(network, cfg, progress))
    result = None
    if tie:
        result = tie_files(out, network, cfg, em.layout, progress)
        certificates["render_tie"] = result.certificate()
    E.write_manifest(em, out, certificates)
    return out, result


def pending_certificates() -> dict:
    """The manifest's ``certificates`` before any is made: the network's backward and
    the loss's (``render(..., certify=True)`` fills them) and the render tie's."""
    note = "not certified at render time (render with certify=True, or `verigrad render` without --no-certify)"
    return {"network_backward": {"status": "UNKNOWN", "note": note},
            "loss_backward": {"status": "UNKNOWN", "layer": "softmax_xent", "note": note},
            "render_tie": {"status": "UNKNOWN", "note": "not tied (rendered with tie=False)"}}


def check(directory, net=None, progress=None):
    """Tie an already rendered directory again: a ``verigrad.render.tie.Tie``."""
    from .tie import tie_directory
    return tie_directory(directory, net, progress)


__all__ = ["render", "render_and_tie", "check", "configure", "Config", "TieFailed", "OPTIMIZERS", "hyperparameters",
           "pending_certificates"]
