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
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from . import backend as B
from . import checkpoint, data
from .initializers import initial_value
from .manifest import Manifest, check_module

SCHEDULES = ("cosine", "constant")


class Diverged(RuntimeError):
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
    test_accuracy: float
    seconds: float
    resumed_from_epoch: int | None = None
    history: list = field(default_factory=list)

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
                 progress: bool = True):
        if config.dataset != "digits":
            raise ValueError(f"unknown dataset {config.dataset!r} (known: digits)")
        if config.schedule not in SCHEDULES:
            raise ValueError(f"unknown schedule {config.schedule!r} (known: {', '.join(SCHEDULES)})")
        self.m, self.cfg = manifest, config
        self.ckpt_dir, self.resume, self.progress = ckpt_dir, resume, progress
        if resume and ckpt_dir is None:
            raise ValueError("resume needs a checkpoint directory")
        ts, fw = manifest.train_step, manifest.forward
        self.step_exe = self._compile(ts)
        check_module(manifest, ts, self.step_exe.signature, "train_step")
        self.fwd_exe = self._compile(fw)
        check_module(manifest, fw, self.fwd_exe.signature, "forward")
        self.split = data.digits()
        self.example_shape = ts.role("batch_x")[0].shape[1:]
        if math.prod(self.example_shape) != data.FEATURES:
            raise ValueError(f"batch_x examples have shape {list(self.example_shape)}; digits have 64 pixels")
        if manifest.classes != data.CLASSES:
            raise ValueError(f"batch_y has {manifest.classes} classes; digits have {data.CLASSES}")
        self.loss_at = [k for k, p in enumerate(ts.outputs) if p.role == "loss"][0]
        self.logits_at = [k for k, p in enumerate(fw.outputs) if p.role == "logits"][0]

    def _compile(self, module):
        text, names, path = self.m.text(module), [p.name for p in module.inputs], str(self.m.path(module))
        n = self.cfg.devices
        if n == 1:
            return B.compile(text, self.cfg.backend, names, path)
        import jax
        if self.cfg.backend != "xla":
            raise ValueError("data parallelism runs on the xla backend only")
        if len(jax.devices()) < n:
            raise ValueError(f"{n} devices requested, {len(jax.devices())} available")
        if self.m.batch % n:
            raise ValueError(f"the batch {self.m.batch} does not split over {n} devices")
        from .parallel import compile_data_parallel
        sharded = [p.role in ("batch_x", "batch_y", "drop_mask") for p in module.inputs]
        return compile_data_parallel(text, sharded, jax.devices()[:n], names, path)

    # -- state ------------------------------------------------------------------------------
    def _initial(self, rng) -> dict:
        arrays = {p.name: initial_value(p.init, p.shape, rng) for p in self.m.params}
        for p in self.m.train_step.role("opt_state"):
            arrays[p.name] = np.zeros(p.shape, np.float32)
        return arrays

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
        return args

    def evaluate(self, state: dict, x=None, labels=None) -> float:
        """Accuracy of the forward module (all-ones drop masks) on the test split."""
        x = self.split.x_test if x is None else x
        labels = self.split.y_test if labels is None else labels
        fw, correct = self.m.forward, 0
        for xb, yb, valid in data.eval_batches(x, labels, self.m.batch):
            args = []
            for p in fw.inputs:
                if p.role == "param":
                    args.append(state[p.name])
                elif p.role == "batch_x":
                    args.append(xb.reshape((-1,) + self.example_shape))
                else:
                    args.append(np.ones(p.shape, np.float32))
            logits = B.to_host(self.fwd_exe(*args)[self.logits_at])
            correct += int(np.sum(np.argmax(logits[:valid], axis=-1) == yb[:valid]))
        return correct / len(x)

    # -- the loop ---------------------------------------------------------------------------
    def run(self, stop_after: int | None = None) -> Summary:
        cfg, m = self.cfg, self.m
        per_epoch = data.steps_per_epoch(len(self.split.x_train), m.batch)
        total = per_epoch * cfg.epochs
        rng = np.random.default_rng(cfg.seed)
        step, start_epoch, resumed = 0, 0, None
        if self.resume:
            st = checkpoint.load(self.ckpt_dir)
            checkpoint.check_compatible(st, cfg.identity(), m.fingerprint(), f"{self.ckpt_dir}/{checkpoint.FILE}")
            arrays, step, start_epoch, resumed = st.arrays, st.step, st.epoch, st.epoch
            rng.bit_generator.state = st.rng
        else:
            arrays = self._initial(rng)
        state = self._to_device(arrays)
        t0 = time.perf_counter()
        history, loss_mean, acc = [], float("nan"), float("nan")
        last = cfg.epochs if stop_after is None else min(cfg.epochs, stop_after)
        with _progress(self.progress, m.net, total, step) as bar:
            for epoch in range(start_epoch, last):
                losses = []
                for b, (x, y, _) in enumerate(data.batches(self.split.x_train, self.split.y_train, m.batch, rng,
                                                          data.CLASSES, m.label_smoothing)):
                    lr = learning_rate(cfg, step, total, per_epoch)
                    args = self._arguments(state, x.reshape((-1,) + self.example_shape), y, rng, lr, step + 1)
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
                loss_mean = float(np.mean(losses))
                acc = self.evaluate(state)
                history.append({"epoch": epoch + 1, "loss": loss_mean, "test_accuracy": acc})
                bar.advance(epoch, loss_mean, acc, 0)
                if self.ckpt_dir is not None:
                    checkpoint.save(self.ckpt_dir, checkpoint.State(
                        self._host_state(state), step, epoch + 1, rng.bit_generator.state, cfg.identity(),
                        m.fingerprint()))
        if not history:
            acc = self.evaluate(state)
        self.state = state
        return Summary(m.net, cfg.backend, last, step, loss_mean, acc, time.perf_counter() - t0, resumed, history)

    def parameters(self) -> dict:
        """The current parameters and optimizer state as numpy arrays."""
        return self._host_state(self.state)


class _progress:
    """A rich progress bar over steps showing the loss and the last test accuracy (or
    nothing, for ``--json`` and tests)."""

    def __init__(self, enabled, net, total, done):
        self.enabled, self.net, self.total, self.done = enabled, net, total, done

    def __enter__(self):
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
            self.p = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                              TextColumn("{task.fields[status]}"), TimeRemainingColumn(), transient=False)
            self.p.__enter__()
            self.task = self.p.add_task(f"train {self.net}", total=self.total, completed=self.done, status="")
        return self

    def advance(self, epoch, loss, acc, n=1):
        if self.enabled:
            status = f"epoch {epoch + 1}  loss {loss:.4f}" + ("" if math.isnan(acc) else f"  test acc {acc:.2%}")
            self.p.update(self.task, advance=n, status=status)

    def __exit__(self, *exc):
        if self.enabled:
            self.p.__exit__(*exc)
        return False


__all__ = ["Trainer", "Config", "Summary", "Diverged", "learning_rate", "SCHEDULES"]
