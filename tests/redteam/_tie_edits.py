"""The red team's edits of a rendered train step: render a small MLP, put a few lines of
StableHLO before the step's return so that they replace the new ``head/b``, re-pin the
manifest's hash so that only the tie stands between the edit and training, and run a
step through XLA."""
import json
import re
import shutil

import numpy as np

from verigrad.render import render
from verigrad.run import backend as B
from verigrad.run.manifest import sha256_file


def rendered_mlp(tmp_path_factory, name):
    """A 64-16-10 MLP (sgd, batch 8) rendered without its tie, in a fresh folder named ``name``."""
    return render("mlp", tmp_path_factory.mktemp(name) / "mlp", batch=8, opt="sgd", tie=False,
                  options={"hidden": [16]})


def repin(directory):
    """Write the train step's current sha256 into the manifest of ``directory``."""
    path = directory / "train_step.mlir"
    m = json.loads((directory / "manifest.json").read_text())
    m["train_step"]["sha256"] = sha256_file(path)
    (directory / "manifest.json").write_text(json.dumps(m))


def edited_head_bias(src, dst, body):
    """A copy ``dst`` of the rendered ``src`` whose train step returns ``%rt9`` for the new
    ``head/b``: ``body(y, ys, new_b)`` gives the lines put before the return, from the
    argument number ``y`` of the batch's targets, their tensor shape ``ys`` (``8x10xf32``)
    and the name of the step's own new ``head/b``; they must define ``%rt9``. Returns
    ``(dst, k)``, ``k`` the output number of ``head/b``."""
    shutil.copytree(src, dst)
    m = json.loads((dst / "manifest.json").read_text())
    ins = m["train_step"]["inputs"]
    y = next(k for k, p in enumerate(ins) if p["role"] == "batch_y")
    ys = "x".join(map(str, ins[y]["shape"])) + "xf32"
    k = next(k for k, p in enumerate(m["train_step"]["outputs"]) if p["name"].endswith("head/b"))
    path = dst / "train_step.mlir"
    text = path.read_text()
    ret = re.search(r"^(\s*)return (.*?) : (.*)$", text, re.M)
    outs = [s.strip() for s in ret.group(2).split(",")]
    lines = body(y, ys, outs[k])
    outs[k] = "%rt9"
    indent = ret.group(1)
    new = "".join(f"{indent}{line}\n" for line in lines) + f"{indent}return {', '.join(outs)} : {ret.group(3)}"
    path.write_text(text[:ret.start()] + new + text[ret.end():])
    repin(dst)
    return dst, k


def run_step(directory, args):
    """The train step of ``directory`` run by XLA on ``args``, its results on the host."""
    text = (directory / "train_step.mlir").read_text()
    m = json.loads((directory / "manifest.json").read_text())
    exe = B.compile(text, "xla", [p["name"] for p in m["train_step"]["inputs"]], str(directory))
    return [np.asarray(B.to_host(x)) for x in exe(*args)]


def step_args(directory, smoothed=True):
    """Inputs for the train step of ``directory`` (seed 0): parameters and data
    ``0.1 * N(0, 1)``; the targets smoothed one-hot rows (0.91 and 0.01), as training feeds
    them, or with ``smoothed=False`` normal like the rest."""
    m = json.loads((directory / "manifest.json").read_text())
    rng = np.random.default_rng(0)
    args = []
    for p in m["train_step"]["inputs"]:
        shape = tuple(p["shape"])
        if p["role"] == "batch_y" and smoothed:
            y = np.full(shape, 0.01, np.float32)
            y[np.arange(shape[0]), rng.integers(0, shape[1], shape[0])] = 0.91
            args.append(y)
        else:
            args.append((0.1 * rng.standard_normal(shape)).astype(np.float32))
    return args
