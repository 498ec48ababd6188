"""``manifest.json``: how to call a rendered train step (schema, loader, checks).

The renderer writes ``train_step.mlir``, ``forward.mlir`` and this manifest into one
directory; the training loop reads only the manifest to know what to feed. Schema
(every field is checked by ``load``; errors name the field, e.g.
``manifest.json: train_step.inputs[3].shape: ...``)::

    {"net": "mlp",                       # a name, for messages
     "batch": 64,                        # B: rows of every batch_x / batch_y
     "dtype": "f32",
     "optimizer": {"name": "sgd" | "momentum" | "adamw", ...hyperparameters},
     "label_smoothing": 0.1,             # targets: (1 - s) one_hot + s / classes
     "drop_path": 0.1,                   # the rate the sites were rendered with
     "train_step": MODULE, "forward": MODULE,
     "params": [{"name": "params/fc1/W", "shape": [64, 128],
                 "init": "he_normal", "decay": true}, ...],
     "certificates": {...}}              # the renderer's, passed through

    MODULE = {"file": "train_step.mlir", "sha256": "<hex of the file>",
              "inputs":  [PORT, ...],    # in the order of @main's arguments
              "outputs": [PORT, ...]}    # in the order of @main's results
    PORT = {"name": str, "role": ROLE, "shape": [int, ...], "dtype": "f32",
            "keep": 0.975}               # keep: drop_mask inputs only

Input roles: ``param``, ``opt_state`` (optimizer state, all zeros at step 0),
``batch_x``, ``batch_y`` (targets, one-hot or smoothed), ``drop_mask`` (one
``tensor<B>`` per drop-path site: ``bernoulli(keep) / keep`` in training, ones in
evaluation), ``lr``, ``bias_correction1`` and ``bias_correction2`` (AdamW's
``1 - beta1^t`` and ``1 - beta2^t`` for the 1-based step ``t``; the module divides by
them). Output roles: ``param`` and ``opt_state`` (the new value of the input of the
same name), ``loss`` (a scalar, the mean over the batch), ``logits`` (forward), and
``metric`` (any other scalar, logged). ``shape`` and ``dtype`` of outputs may be
omitted; they are then read from the module.

Parameter initialisers (``init``): ``zeros``, ``ones``, ``he_normal``,
``lecun_normal``, ``glorot_uniform``, ``normal(STD)``, ``trunc_normal(STD)``,
``constant(V)``; fan-in
is the product of all axes but the last (``[in, out]`` dense, ``[kh, kw, cin, cout]``
convolution kernels).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from verigrad.errors import VerigradError

INPUT_ROLES = ("param", "opt_state", "batch_x", "batch_y", "drop_mask", "lr", "bias_correction1",
               "bias_correction2")
OUTPUT_ROLES = ("param", "opt_state", "loss", "logits", "metric")
OPTIMIZERS = ("sgd", "momentum", "adamw")
INITS = re.compile(r"^(zeros|ones|he_normal|lecun_normal|glorot_uniform|(trunc_)?normal\((\d+(\.\d*)?(e-?\d+)?)\)"
                   r"|constant\(-?\d+(\.\d*)?(e-?\d+)?\))$")
DTYPES = ("f32", "f64", "f16", "bf16", "i32", "i64", "i1")


class ManifestError(VerigradError, ValueError):
    """A manifest that does not follow the schema; the message names the field."""


@dataclass(frozen=True)
class Port:
    """One argument or result of a module."""
    name: str
    role: str
    shape: tuple | None
    dtype: str | None
    keep: float | None = None


@dataclass(frozen=True)
class ModuleSpec:
    file: str
    sha256: str
    inputs: tuple
    outputs: tuple

    def role(self, role: str) -> list:
        return [p for p in self.inputs if p.role == role]

    def output_role(self, role: str) -> list:
        return [p for p in self.outputs if p.role == role]


@dataclass(frozen=True)
class ParamSpec:
    name: str
    shape: tuple
    init: str
    decay: bool


@dataclass
class Manifest:
    net: str
    batch: int
    dtype: str
    optimizer: dict
    label_smoothing: float
    drop_path: float
    train_step: ModuleSpec
    forward: ModuleSpec
    params: tuple
    certificates: dict = field(default_factory=dict)
    directory: Path = Path(".")
    raw: dict = field(default_factory=dict)

    texts: dict = field(default_factory=dict)      # file -> text, once pinned

    def path(self, module: ModuleSpec) -> Path:
        return self.directory / module.file

    def text(self, module: ModuleSpec) -> str:
        """The module's text: the pinned bytes (``pin``), else the file as it is now."""
        pinned = self.texts.get(module.file)
        return pinned if pinned is not None else self.path(module).read_text()

    def pin(self) -> "Manifest":
        """Read each module's bytes once, check them against the manifest's sha256,
        and keep them: ``text`` returns those bytes from now on, whatever happens to
        the files (what was checked is what runs)."""
        for where, module in (("train_step", self.train_step), ("forward", self.forward)):
            data = self.path(module).read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if digest != module.sha256:
                raise ManifestError(f"{self.directory / 'manifest.json'}: {where}.sha256: {module.file} has sha256 "
                                    f"{digest[:16]}..., the manifest says {module.sha256[:16]}... (the file was "
                                    "changed after rendering)")
            try:
                self.texts[module.file] = data.decode()
            except UnicodeDecodeError as e:
                raise ManifestError(f"{self.path(module)}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        return self

    @property
    def classes(self) -> int:
        return self.train_step.role("batch_y")[0].shape[-1]

    def fingerprint(self) -> str:
        """The sha256 of the two modules: what a checkpoint must match to resume."""
        return hashlib.sha256((self.train_step.sha256 + self.forward.sha256).encode()).hexdigest()


class _Fields:
    """Reads fields of a JSON object, naming the path of any bad one."""

    def __init__(self, src: str):
        self.src = src

    def fail(self, where: str, why: str):
        raise ManifestError(f"{self.src}: {where}: {why}")

    def get(self, obj, key, where, kind, default=...):
        if not isinstance(obj, dict):
            self.fail(where or "top level", f"expected an object, got {type(obj).__name__}")
        w = f"{where}.{key}" if where else key
        if key not in obj:
            if default is ...:
                self.fail(w, "missing")
            return default
        return self.check(obj[key], w, kind)

    def check(self, v, w, kind):
        if kind == "int" and not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
            self.fail(w, f"expected an integer >= 1, got {v!r}")
        if kind == "number" and not (isinstance(v, (int, float)) and not isinstance(v, bool)):
            self.fail(w, f"expected a number, got {v!r}")
        if kind == "str" and not (isinstance(v, str) and v):
            self.fail(w, f"expected a non-empty string, got {v!r}")
        if kind == "bool" and not isinstance(v, bool):
            self.fail(w, f"expected true or false, got {v!r}")
        if kind == "list" and not isinstance(v, list):
            self.fail(w, f"expected a list, got {v!r}")
        if kind == "dict" and not isinstance(v, dict):
            self.fail(w, f"expected an object, got {v!r}")
        if kind == "shape" and not (isinstance(v, list) and all(isinstance(d, int) and not isinstance(d, bool)
                                                                 and d >= 1 for d in v)):
            self.fail(w, f"expected a list of integers >= 1, got {v!r}")
        if kind == "rate" and not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1):
            self.fail(w, f"expected a number in [0, 1), got {v!r}")
        return tuple(v) if kind == "shape" else v


def _port(F: _Fields, obj, where, roles, output=False) -> Port:
    name = F.get(obj, "name", where, "str")
    role = F.get(obj, "role", where, "str")
    if role not in roles:
        F.fail(f"{where}.role", f"unknown role {role!r} (known: {', '.join(roles)})")
    shape = F.get(obj, "shape", where, "shape", None if output else ...)
    dtype = F.get(obj, "dtype", where, "str", None if output else ...)
    if dtype is not None and dtype not in DTYPES:
        F.fail(f"{where}.dtype", f"unknown dtype {dtype!r} (known: {', '.join(DTYPES)})")
    keep = None
    if role == "drop_mask":
        keep = F.get(obj, "keep", where, "number")
        if not 0 < keep <= 1:
            F.fail(f"{where}.keep", f"expected a probability in (0, 1], got {keep!r}")
    return Port(name, role, shape, dtype, keep)


def _module(F: _Fields, obj, where, directory: Path | None) -> ModuleSpec:
    file = F.get(obj, "file", where, "str")
    sha = F.get(obj, "sha256", where, "str")
    ins = F.get(obj, "inputs", where, "list")
    outs = F.get(obj, "outputs", where, "list")
    inputs = tuple(_port(F, p, f"{where}.inputs[{k}]", INPUT_ROLES) for k, p in enumerate(ins))
    outputs = tuple(_port(F, p, f"{where}.outputs[{k}]", OUTPUT_ROLES, True) for k, p in enumerate(outs))
    for kind, ports in (("inputs", inputs), ("outputs", outputs)):
        seen = set()
        for k, p in enumerate(ports):
            if p.name in seen:
                F.fail(f"{where}.{kind}[{k}].name", f"{p.name!r} appears twice")
            seen.add(p.name)
    if directory is not None:
        path = directory / file
        if not path.is_file():
            F.fail(f"{where}.file", f"{path} does not exist")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != sha:
            F.fail(f"{where}.sha256", f"{file} has sha256 {digest[:16]}..., the manifest says {sha[:16]}... "
                   "(the file was changed after rendering)")
    return ModuleSpec(file, sha, inputs, outputs)


def _check_roles(F: _Fields, m: Manifest):
    ts, fw, B = m.train_step, m.forward, m.batch
    for where, mod, need in (("train_step", ts, ("batch_x", "batch_y", "lr")), ("forward", fw, ("batch_x",))):
        for role in need + ("lr", "bias_correction1", "bias_correction2", "batch_x", "batch_y"):
            n = len(mod.role(role))
            if n > 1 or (role in need and n == 0):
                F.fail(f"{where}.inputs", f"expected {'exactly' if role in need else 'at most'} one input "
                       f"of role {role}, found {n}")
        for k, p in enumerate(mod.inputs):
            w = f"{where}.inputs[{k}]"
            if p.role in ("batch_x", "batch_y") and (not p.shape or p.shape[0] != B):
                F.fail(f"{w}.shape", f"a {p.role} input must have {B} (the batch) rows, got {list(p.shape)}")
            if p.role == "drop_mask" and p.shape != (B,):
                F.fail(f"{w}.shape", f"a drop mask must have shape [{B}] (one entry per example), got {list(p.shape)}")
            if p.role in ("lr", "bias_correction1", "bias_correction2") and p.shape != ():
                F.fail(f"{w}.shape", f"{p.role} must be a scalar (shape []), got {list(p.shape)}")
    if ts.role("bias_correction1") and m.optimizer["name"] != "adamw":
        F.fail("train_step.inputs", f"bias corrections are inputs of AdamW, not of {m.optimizer['name']}")
    # The state: every param / opt_state input comes back as an output of that name.
    ins = {(p.name, p.role): (k, p) for k, p in enumerate(ts.inputs) if p.role in ("param", "opt_state")}
    outs = {(p.name, p.role): (k, p) for k, p in enumerate(ts.outputs) if p.role in ("param", "opt_state")}
    for key, (k, p) in ins.items():
        if key not in outs:
            F.fail(f"train_step.inputs[{k}]", f"{p.role} {p.name!r} has no output of the same name and role")
        o = outs[key][1]
        if o.shape is not None and o.shape != p.shape:
            F.fail(f"train_step.outputs[{outs[key][0]}].shape", f"{list(o.shape)} differs from the input's {list(p.shape)}")
    for key, (k, p) in outs.items():
        if key not in ins:
            F.fail(f"train_step.outputs[{k}]", f"{p.role} {p.name!r} is not an input")
    if len(ts.output_role("loss")) != 1:
        F.fail("train_step.outputs", f"expected exactly one output of role loss, found {len(ts.output_role('loss'))}")
    if len(fw.output_role("logits")) != 1:
        F.fail("forward.outputs", f"expected exactly one output of role logits, found {len(fw.output_role('logits'))}")
    # Parameters: the list, the train step's and the forward's agree.
    declared = {p.name: p for p in m.params}
    step_params = {p.name: p for p in ts.role("param")}
    if list(declared) != list(step_params):
        F.fail("params", f"names {list(declared)} differ from the train step's param inputs {list(step_params)}")
    for k, p in enumerate(m.params):
        if step_params[p.name].shape != p.shape:
            F.fail(f"params[{k}].shape", f"{list(p.shape)} differs from the train step's {list(step_params[p.name].shape)}")
    for k, p in enumerate(fw.inputs):
        if p.role == "param" and (p.name not in declared or declared[p.name].shape != p.shape):
            F.fail(f"forward.inputs[{k}]", f"param {p.name!r} {list(p.shape)} is not a declared parameter of that shape")
        if p.role not in ("param", "batch_x", "drop_mask"):
            F.fail(f"forward.inputs[{k}].role", f"the forward module takes param, batch_x and drop_mask inputs, not {p.role}")
    if ts.role("batch_x")[0].shape[1:] != fw.role("batch_x")[0].shape[1:]:
        F.fail("forward.inputs", "batch_x has a different example shape from the train step's")


def from_dict(obj: dict, directory: Path | None = None, src: str = "manifest.json") -> Manifest:
    """Check ``obj`` against the schema (and the files' sha256 when ``directory``
    is given) and build a ``Manifest``."""
    F = _Fields(src)
    net = F.get(obj, "net", "", "str")
    batch = F.get(obj, "batch", "", "int")
    dtype = F.get(obj, "dtype", "", "str")
    opt = F.get(obj, "optimizer", "", "dict")
    name = F.get(opt, "name", "optimizer", "str")
    if name not in OPTIMIZERS:
        F.fail("optimizer.name", f"unknown optimizer {name!r} (known: {', '.join(OPTIMIZERS)})")
    if name == "adamw":
        betas = F.get(opt, "betas", "optimizer", "list")
        if len(betas) != 2 or not all(isinstance(b, (int, float)) and 0 <= b < 1 for b in betas):
            F.fail("optimizer.betas", f"expected two numbers in [0, 1), got {betas!r}")
    smoothing = F.get(obj, "label_smoothing", "", "rate", 0.0)
    drop_path = F.get(obj, "drop_path", "", "rate", 0.0)
    train_step = _module(F, F.get(obj, "train_step", "", "dict"), "train_step", directory)
    forward = _module(F, F.get(obj, "forward", "", "dict"), "forward", directory)
    params = []
    for k, p in enumerate(F.get(obj, "params", "", "list")):
        w = f"params[{k}]"
        init = F.get(p, "init", w, "str")
        if not INITS.match(init):
            F.fail(f"{w}.init", f"unknown initialiser {init!r} (known: zeros, ones, he_normal, lecun_normal, "
                   "glorot_uniform, normal(STD), trunc_normal(STD), constant(V))")
        params.append(ParamSpec(F.get(p, "name", w, "str"), F.get(p, "shape", w, "shape"), init,
                                F.get(p, "decay", w, "bool", True)))
    certificates = F.get(obj, "certificates", "", "dict", {})
    m = Manifest(net, batch, dtype, dict(opt), float(smoothing), float(drop_path), train_step, forward,
                 tuple(params), certificates, directory or Path("."), obj)
    _check_roles(F, m)
    return m


def load(path) -> Manifest:
    """Read ``DIR/manifest.json`` (or the given file) and check it and its modules."""
    path = Path(path)
    if path.is_dir():
        path = path / "manifest.json"
    if not path.is_file():
        raise ManifestError(f"{path}: no such manifest (render a network first: verigrad render NET --out DIR)")
    try:
        obj = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ManifestError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    return from_dict(obj, path.parent, str(path))


def check_module(m: Manifest, module: ModuleSpec, sig, where: str):
    """The module's ``@main`` takes and returns what the manifest says."""
    src = f"{m.directory / module.file}"
    if len(sig.inputs) != len(module.inputs):
        raise ManifestError(f"{src}: @main takes {len(sig.inputs)} arguments, {where}.inputs lists {len(module.inputs)}")
    if len(sig.outputs) != len(module.outputs):
        raise ManifestError(f"{src}: @main returns {len(sig.outputs)} results, {where}.outputs lists {len(module.outputs)}")
    for k, (p, s) in enumerate(zip(module.inputs, sig.inputs)):
        if p.shape != s.shape or p.dtype != s.dtype:
            raise ManifestError(f"{src}: argument {k} of @main is {s}, {where}.inputs[{k}] ({p.name}) says "
                                f"shape {list(p.shape)} {p.dtype}")
    for k, (p, s) in enumerate(zip(module.outputs, sig.outputs)):
        if (p.shape is not None and p.shape != s.shape) or (p.dtype is not None and p.dtype != s.dtype):
            raise ManifestError(f"{src}: result {k} of @main is {s}, {where}.outputs[{k}] ({p.name}) says "
                                f"shape {list(p.shape or [])} {p.dtype}")
        if p.role in ("loss", "metric") and s.shape != ():
            raise ManifestError(f"{src}: result {k} ({p.name}) of role {p.role} must be a scalar, it is {s}")


def sha256_file(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


__all__ = ["Manifest", "ModuleSpec", "Port", "ParamSpec", "ManifestError", "load", "from_dict", "check_module",
           "sha256_file", "INPUT_ROLES", "OUTPUT_ROLES"]
