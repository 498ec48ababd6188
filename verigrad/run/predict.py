r"""Predictions from a rendered directory: its tied ``forward.mlir`` with trained parameters.

``predict(directory, x, params=None)`` ties the directory again first, exactly as
``verigrad train DIR`` does (``verigrad.render.tie.ensure_tied``: the bytes of both
modules are hashed against the manifest, tied to the certified math, and those very
bytes are compiled), loads the parameters (default ``DIR/params.safetensors``, then
``DIR/params.npz``), checks them against the forward module's parameter inputs
(names and shapes, finite values), and runs the forward over ``x`` in batches of the
rendered size (the last batch padded; drop-path sites all ones, as in evaluation).
Returns the logits, ``(N, classes)`` float32.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import backend as B
from . import data as D
from . import dataset, params_io


def default_params(directory) -> Path:
    d = Path(directory)
    for name in ("params.safetensors", "params.npz"):
        if (d / name).is_file():
            return d / name
    raise params_io.ParamsError(f"{d}: no params.safetensors or params.npz (train it first: verigrad train {d}; "
                                "or give --params FILE)")


class Predictor:
    """A tied forward module and its parameters, ready to run on arrays."""

    def __init__(self, directory, params=None, device=None, progress=None):
        from verigrad.render.tie import ensure_tied
        from .manifest import check_module
        self.directory = Path(directory)
        self.m = ensure_tied(self.directory, progress=progress)      # NotTied: one line
        fw = self.m.forward
        self.params_path = Path(params) if params is not None else default_params(self.directory)
        arrays, self.metadata = params_io.load(self.params_path)
        self.params = params_io.check_against(arrays, fw.role("param"), str(self.params_path))
        # Names and shapes fit, but parameters trained with another forward module (the
        # folder rendered again since, with other options) are not this one's: said, not
        # refused (fine-tuning from them is a use). None: the file does not say (.npz).
        trained_for = self.metadata.get("forward_sha256")
        self.trained_for_this = None if trained_for is None else trained_for == fw.sha256
        self.exe = B.compile(self.m.text(fw), "xla", [p.name for p in fw.inputs], str(self.m.path(fw)), device=device)
        check_module(self.m, fw, self.exe.signature, "forward")
        self.example_shape = fw.role("batch_x")[0].shape[1:]
        self.logits_at = [k for k, p in enumerate(fw.outputs) if p.role == "logits"][0]
        self.classes = self.m.classes

    def logits(self, x) -> np.ndarray:
        x = dataset.fit_shape(dataset.check_x(x, "x"), self.example_shape, "x")
        fw, out = self.m.forward, []
        zeros = np.zeros(len(x), np.int64)
        for xb, _, valid in D.eval_batches(x, zeros, self.m.batch):
            args = []
            for p in fw.inputs:
                if p.role == "param":
                    args.append(self.params[p.name])
                elif p.role == "batch_x":
                    args.append(xb)
                else:
                    args.append(np.ones(p.shape, np.float32))
            out.append(B.to_host(self.exe(*args)[self.logits_at])[:valid])
        return np.concatenate(out, axis=0)


def predict(directory, x, params=None) -> np.ndarray:
    """The logits of the tied forward module of ``directory`` at ``x``."""
    return Predictor(directory, params).logits(x)


__all__ = ["Predictor", "predict", "default_params"]
