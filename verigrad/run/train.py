"""The training loop over a rendered train step (untrusted driver of checked text).

The manifest says what each argument of ``@main`` is; each step the loop feeds
parameters and optimizer state (device arrays, the previous step's outputs), a
shuffled batch and its smoothed targets, one drop-path mask per site
(``bernoulli(keep) / keep`` per example), the learning rate and AdamW's bias
corrections ``1 - beta^t``; it keeps the returned state on the device and reads back
only the loss. Test accuracy comes from the forward module with all-ones masks.

Learning rate: ``cosine`` (default) warms up linearly over ``warmup_epochs`` and then
follows ``lr (1 + cos(pi t / T)) / 2`` over the ``T`` steps of the run; ``constant``
keeps ``lr``.

A NaN or infinite loss stops the run with ``Diverged`` naming the step; the last
checkpoint is left as it was. All randomness (initialisation, shuffles, masks) comes
from one numpy ``Generator`` seeded by ``seed``, whose state the checkpoints keep.

Data: scikit-learn's digits by default, or ``data=`` (``verigrad.run.dataset``:
``Arrays`` checked against the network's input shape and classes before the first
step, or a ``Stream`` of batches, each checked before its step). Placement:
``placement=`` (``verigrad.run.distributed``) runs the step data-parallel over
several devices or processes; every process draws the same global batches and only
the first writes checkpoints and parameters. ``save_params(path)`` writes the
trained parameters (``.safetensors`` or ``.npz``, the manifest's names).
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from . import backend as B
from . import checkpoint, data, dataset
from .initializers import initial_value
from .manifest import Manifest, check_module
from verigrad.errors import VerigradError

SCHEDULES = ("cosine", "constant")
POSITIVE_INPUTS = ("lr", "bias_correction1", "bias_correction2")    # render.domains.preconditions


class Diverged(VerigradError, RuntimeError):
    """The loss became NaN or infinite."""


@dataclass
class Config:
    epochs: int = 10
    lr: float = 1e-3
    schedule: str = "cosine"
    warmup_epochs: float = 1.0
    seed: int = 0
    backend: str = "xla"
    dataset: str = "digits"
    devices: int = 1

    def identity(self) -> dict:
        """What a resumed run must share with the checkpointed one."""
        d = asdict(self)
        for key in ("backend", "devices"):   # may change between runs (then not bit-identically)
            d.pop(key)
        return d


@dataclass
class Summary:
    net: str
    backend: str
    epochs: int
    steps: int
    loss: float
    test_accuracy: float | None
    seconds: float
    resumed_from_epoch: int | None = None
    history: list = field(default_factory=list)
    data: str = "digits"
    devices: str = "1 cpu device"
    params: str | None = None           # where the trained parameters were written

    def as_dict(self) -> dict:
        return asdict(self)


def learning_rate(cfg: Config, step: int, total: int, per_epoch: int) -> float:
    if cfg.schedule == "constant":
        return cfg.lr
    warm = max(1, int(round(cfg.warmup_epochs * per_epoch)))
    ramp = min(1.0, (step + 1) / warm)
    return cfg.lr * ramp * 0.5 * (1.0 + math.cos(math.pi * min(step, total) / max(total, 1)))


class Trainer:
    """Train the rendered network of ``manifest`` on digits.

    ``run(stop_after=K)`` stops after epoch K as an interruption would (the
    checkpoint of epoch K is written), which is how the resume tests cut a run."""

    def __init__(self, manifest: Manifest, config: Config, ckpt_dir=None, resume: bool = False,
                 progress: bool = True, data=None, placement=None):
        if data is None and config.dataset != "digits":
            raise ValueError(f"unknown dataset {config.dataset!r} (known: digits; or pass data=)")
        if config.schedule not in SCHEDULES:
            raise ValueError(f"unknown schedule {config.schedule!r} (known: {', '.join(SCHEDULES)})")
        if not (isinstance(config.lr, (int, float)) and math.isfinite(config.lr) and config.lr > 0):
            raise ValueError(f"the learning rate must be a positive number, got {config.lr!r} (the tie of the "
                             "train step rests on it: render.domains.preconditions)")
        self.m, self.cfg = manifest, config
        self.ckpt_dir, self.resume, self.progress = ckpt_dir, resume, progress
        if resume and ckpt_dir is None:
            raise ValueError("resume needs a checkpoint directory")
        ts, fw = manifest.train_step, manifest.forward
        self.example_shape = ts.role("batch_x")[0].shape[1:]
        # The data first: a bad array is reported before anything is compiled or run.
        self.data = self._checked_data(dataset.digits() if data is None else data)
        if placement is None:
            from .distributed import current
            placement = current(config.devices)
        self.placement = placement
        if placement.parallel and config.backend != "xla":
            raise ValueError("data parallelism runs on the xla backend only")
        if manifest.batch % len(placement.devices):
            raise ValueError(f"the batch {manifest.batch} does not split over {len(placement.devices)} devices")
        self.step_exe = self._compile(ts, placement.parallel)
        check_module(manifest, ts, self.step_exe.signature, "train_step")
        self.fwd_exe = self._compile(fw, False)
        check_module(manifest, fw, self.fwd_exe.signature, "forward")
        self.loss_at = [k for k, p in enumerate(ts.outputs) if p.role == "loss"][0]
        self.logits_at = [k for k, p in enumerate(fw.outputs) if p.role == "logits"][0]

    def _checked_data(self, d):
        m = self.m
        if isinstance(d, dataset.Stream):
            if d.steps is None and self.cfg.schedule == "cosine":
                raise dataset.DataError(f"{d.source}: an iterable of batches without len(): give steps_per_epoch, "
                                        "or use the constant schedule")
            if d.test is not None:
                d.test = d.test.fitted(self.example_shape, m.classes, 1)
            return d
        if not isinstance(d, dataset.Arrays):
            d = dataset.from_python(d, "data", hold_out=True)
            return self._checked_data(d)
        return d.fitted(self.example_shape, m.classes, m.batch)

    def _compile(self, module, parallel: bool):
        text, names, path = self.m.text(module), [p.name for p in module.inputs], str(self.m.path(module))
        if not parallel:
            device = self.placement.local[0] if self.cfg.backend == "xla" else None
            return B.compile(text, self.cfg.backend, names, path, device=device)
        from .parallel import compile_data_parallel
        sharded = [p.role in ("batch_x", "batch_y", "drop_mask") for p in module.inputs]
        return compile_data_parallel(text, sharded, self.placement.devices, names, path)

    # -- state ------------------------------------------------------------------------------
    def _initial(self, rng) -> dict:
        arrays = {p.name: initial_value(p.init, p.shape, rng) for p in self.m.params}
        for p in self.m.train_step.role("opt_state"):
            arrays[p.name] = np.zeros(p.shape, np.float32)
        return arrays

    def _check_nonneg_slots(self, arrays: dict, where: str):
        """The optimizer slots the tie takes as nonnegative (AdamW's second moments,
        ``render.domains.preconditions``) must be so in a resumed checkpoint: the steps
        keep them so, a file need not (RT-47-h2)."""
        from verigrad.render.optimizers import OPTIMIZERS
        slots = OPTIMIZERS[self.m.optimizer["name"]].nonneg_slots
        for p in self.m.train_step.role("opt_state"):
            if p.name.split("/")[1] in slots and not np.all(np.asarray(arrays[p.name]) >= 0):
                raise checkpoint.CheckpointError(f"{where}: {p.name} has negative or NaN entries; the train step "
                                                 "is tied only for nonnegative second moments")

    def _to_device(self, arrays: dict) -> dict:
        out = {}
        for k, p in enumerate(self.m.train_step.inputs):
            if p.role in ("param", "opt_state"):
                out[p.name] = self.step_exe.put(np.asarray(arrays[p.name], dtype=np.float32), k)
        return out

    def _host_state(self, state: dict) -> dict:
        return {name: B.to_host(v) for name, v in state.items()}

    # -- one step ---------------------------------------------------------------------------
    def _arguments(self, state, x, y, rng, lr, t):
        opt = self.m.optimizer
        args = []
        for p in self.m.train_step.inputs:
            if p.role in ("param", "opt_state"):
                args.append(state[p.name])
            elif p.role == "batch_x":
                args.append(x)
            elif p.role == "batch_y":
                args.append(y)
            elif p.role == "drop_mask":
                args.append(((rng.random(p.shape) < p.keep) / p.keep).astype(np.float32))
            elif p.role == "lr":
                args.append(np.float32(lr))
            elif p.role == "bias_correction1":
                args.append(np.float32(1.0 - opt["betas"][0] ** t))
            elif p.role == "bias_correction2":
                args.append(np.float32(1.0 - opt["betas"][1] ** t))
            # (at least the smallest normal float32: XLA on the CPU flushes a subnormal to 0)
            if p.role in POSITIVE_INPUTS and not (np.isfinite(args[-1]) and args[-1] >= np.finfo(np.float32).tiny):
                # The render tie reads the text's divisions and roots of these inputs as
                # inside their domains (render.domains.preconditions): a step run at lr = 0
                # (a cosine schedule past its last step, when a stream gives more batches
                # than steps_per_epoch) ran an edit that the tie had CHECKED as adding
                # 0 * (1/lr) = 0 and XLA computes as NaN (red team RT-47-h2).
                raise ValueError(f"the {p.role} input of step {t} is {float(args[-1])!r}, not a positive float32: "
                                 "the tie of the train step rests on it being positive and normal (a stream that gives more "
                                 "batches than steps_per_epoch runs the cosine schedule past its end, at 0)")
        return args

    def _test_split(self):
        d = self.data
        return d.test if isinstance(d, dataset.Stream) else (
            dataset.Arrays(d.x_test, d.y_test) if d.x_test is not None else None)

    def evaluate(self, state: dict, x=None, labels=None):
        """Accuracy of the forward module (all-ones drop masks) on the test split
        (None without one)."""
        if x is None:
            test = self._test_split()
            if test is None:
                return None
            x, labels = test.x_train, test.y_train
        fw, correct = self.m.forward, 0
        local = {p.name: _local(state[p.name]) for p in fw.inputs if p.role == "param"}
        for xb, yb, valid in data.eval_batches(x, labels, self.m.batch):
            args = []
            for p in fw.inputs:
                if p.role == "param":
                    args.append(local[p.name])
                elif p.role == "batch_x":
                    args.append(xb.reshape((-1,) + self.example_shape))
                else:
                    args.append(np.ones(p.shape, np.float32))
            logits = B.to_host(self.fwd_exe(*args)[self.logits_at])
            correct += int(np.sum(np.argmax(logits[:valid], axis=-1) == yb[:valid]))
        return correct / len(x)

    # -- the loop ---------------------------------------------------------------------------
    def _epoch(self, rng):
        """One epoch of ``(x, targets)`` batches, each checked."""
        m, d = self.m, self.data
        if isinstance(d, dataset.Stream):
            for k, item in enumerate(d.epoch()):
                got = d.checked(item, k + 1, self.example_shape, m.classes, m.batch)
                if got is not None:
                    yield got[0], data.targets(got[1], m.classes, m.label_smoothing)
            return
        for x, y, _ in data.batches(d.x_train, d.y_train, m.batch, rng, m.classes, m.label_smoothing):
            yield x.reshape((-1,) + self.example_shape), y

    def run(self, stop_after: int | None = None) -> Summary:
        cfg, m = self.cfg, self.m
        d = self.data
        per_epoch = d.steps if isinstance(d, dataset.Stream) else data.steps_per_epoch(len(d.x_train), m.batch)
        per_epoch = per_epoch or 1
        total = per_epoch * cfg.epochs
        rng = np.random.default_rng(cfg.seed)
        step, start_epoch, resumed = 0, 0, None
        if self.resume:
            st = checkpoint.load(self.ckpt_dir)
            checkpoint.check_compatible(st, cfg.identity(), m.fingerprint(), f"{self.ckpt_dir}/{checkpoint.FILE}")
            arrays, step, start_epoch, resumed = st.arrays, st.step, st.epoch, st.epoch
            self._check_nonneg_slots(arrays, f"{self.ckpt_dir}/{checkpoint.FILE}")
            rng.bit_generator.state = st.rng
        else:
            arrays = self._initial(rng)
        state = self._to_device(arrays)
        t0 = time.perf_counter()
        history, loss_mean, acc = [], float("nan"), None
        last = cfg.epochs if stop_after is None else min(cfg.epochs, stop_after)
        with _progress(self.progress, m.net, total, step) as bar:
            for epoch in range(start_epoch, last):
                losses = []
                for b, (x, y) in enumerate(self._epoch(rng)):
                    lr = learning_rate(cfg, step, total, per_epoch)
                    args = self._arguments(state, x, y, rng, lr, step + 1)
                    outs = self.step_exe(*args)
                    loss = float(B.to_host(outs[self.loss_at]))
                    if not math.isfinite(loss):
                        kept = (f"the checkpoint of epoch {epoch} is unchanged" if self.ckpt_dir and epoch > 0
                                else "nothing was saved")
                        raise Diverged(f"the loss is {loss} at step {step + 1} (epoch {epoch + 1}, batch {b + 1} "
                                       f"of {per_epoch}, learning rate {lr:.3g}); stopped, {kept}")
                    for p, o in zip(m.train_step.outputs, outs):
                        if p.role in ("param", "opt_state"):
                            state[p.name] = o
                    losses.append(loss)
                    step += 1
                    bar.advance(epoch, loss, acc)
                if not losses:
                    raise dataset.DataError(f"{d.source}: epoch {epoch + 1} gave no full batch of {m.batch}")
                loss_mean = float(np.mean(losses))
                acc = self.evaluate(state)
                history.append({"epoch": epoch + 1, "loss": loss_mean, "test_accuracy": acc})
                bar.advance(epoch, loss_mean, acc, 0)
                if self.ckpt_dir is not None and self.placement.primary:
                    checkpoint.save(self.ckpt_dir, checkpoint.State(
                        self._host_state(state), step, epoch + 1, rng.bit_generator.state, cfg.identity(),
                        m.fingerprint()))
        if not history:
            acc = self.evaluate(state)
        self.state = state
        return Summary(m.net, cfg.backend, last, step, loss_mean, acc, time.perf_counter() - t0, resumed, history,
                       d.source, self.placement.describe())

    def parameters(self) -> dict:
        """The current parameters and optimizer state as numpy arrays."""
        return self._host_state(self.state)

    def save_params(self, path):
        """The trained parameters (not the optimizer state) to ``path``, ``.safetensors``
        or ``.npz``, under the manifest's names; only the primary process writes.
        Returns the path (None on the other processes)."""
        from . import params_io
        if not self.placement.primary:
            return None
        arrays = {p.name: B.to_host(self.state[p.name]) for p in self.m.params}
        meta = {"format": "verigrad parameters", "net": self.m.net, "forward_sha256": self.m.forward.sha256,
                "train_step_sha256": self.m.train_step.sha256}
        return params_io.save(path, arrays, meta)


def _local(a):
    """This process's copy of a (replicated) parameter."""
    if getattr(a, "is_fully_addressable", True) is False:
        return a.addressable_data(0)
    return a


class _progress:
    """Progress on stderr (or nothing, for ``--json`` and tests): a rich bar over steps
    showing the loss and the last test accuracy on a terminal; otherwise one line per
    epoch, so a log shows the run as it goes."""

    def __init__(self, enabled, net, total, done):
        self.enabled, self.net, self.total, self.done = enabled, net, total, done

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            console = Console(stderr=True)
            self.tty = console.is_terminal
            if self.tty:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
                self.p = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[status]}"), TimeRemainingColumn(), transient=False,
                                  console=console)
                self.p.__enter__()
                self.task = self.p.add_task(f"train {self.net}", total=self.total, completed=self.done, status="")
        return self

    def advance(self, epoch, loss, acc, n=1):
        if not self.enabled:
            return
        status = f"epoch {epoch + 1}  loss {loss:.4f}" + ("" if acc is None or acc != acc else f"  test acc {acc:.2%}")
        if self.tty:
            self.p.update(self.task, advance=n, status=status)
        elif n == 0:                    # the end of an epoch
            import sys
            sys.stderr.write(f"train {self.net}: {status}\n")
            sys.stderr.flush()

    def __exit__(self, *exc):
        if self.enabled and self.tty:
            self.p.__exit__(*exc)
        return False


__all__ = ["Trainer", "Config", "Summary", "Diverged", "learning_rate", "SCHEDULES"]
