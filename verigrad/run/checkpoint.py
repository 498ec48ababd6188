"""Checkpoints: the whole training state in one file, replaced atomically.

``save`` writes ``DIR/checkpoint.npz`` at the end of each epoch: every parameter and
optimizer-state array (by manifest name), and a JSON record of the step, the epoch,
the numpy ``Generator`` state (shuffles and drop-path masks draw from it), the
configuration and the manifest's fingerprint. It writes a temporary file in the same
directory, flushes it to disk and ``os.replace``s it over the old one, so a crash
leaves either the old checkpoint or the new one, never half of one.

Resuming restores exactly this state, so N epochs in one run and N/2 + resume + N/2
give bit-identical parameters.
"""
from __future__ import annotations

import json
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from verigrad.errors import VerigradError

FILE = "checkpoint.npz"
_META = "__meta__"


class CheckpointError(VerigradError, ValueError):
    """A missing, unreadable or mismatched checkpoint."""


@dataclass
class State:
    arrays: dict          # name -> np.ndarray (parameters and optimizer state)
    step: int             # optimizer steps taken
    epoch: int            # epochs completed
    rng: dict             # numpy bit_generator.state
    config: dict          # the run's configuration (what must match to resume)
    fingerprint: str      # the manifest's module hashes


def save(directory, state: State) -> Path:
    """Write ``state`` to ``directory/checkpoint.npz`` atomically."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta = {"step": state.step, "epoch": state.epoch, "rng": state.rng, "config": state.config,
            "fingerprint": state.fingerprint, "names": list(state.arrays)}
    arrays = {f"a{k}": np.asarray(v) for k, v in enumerate(state.arrays.values())}
    arrays[_META] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    fd, tmp = tempfile.mkstemp(prefix=".checkpoint-", suffix=".npz", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, d / FILE)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return d / FILE


def load(directory) -> State:
    path = Path(directory) / FILE
    if not path.is_file():
        raise CheckpointError(f"{path}: no checkpoint to resume from")
    try:
        with np.load(path) as z:
            meta = json.loads(bytes(z[_META]).decode())
            arrays = {name: z[f"a{k}"] for k, name in enumerate(meta["names"])}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:   # truncated, damaged, not ours
        raise CheckpointError(f"{path}: unreadable checkpoint, truncated or not written by verigrad train "
                              f"({type(e).__name__}: {str(e).split('. ')[0]})") from None
    return State(arrays, meta["step"], meta["epoch"], meta["rng"], meta["config"], meta["fingerprint"])


def check_compatible(state: State, config: dict, fingerprint: str, path="checkpoint"):
    """Resuming needs the same modules and the same configuration. The number of epochs
    may change only under the constant schedule: a cosine schedule's learning rates
    depend on the run's total length, so resuming it with other epochs would silently
    give neither the old run nor a straight run of the new length."""
    if state.fingerprint != fingerprint:
        raise CheckpointError(f"{path}: written for other modules (the rendered step changed since)")
    for key, value in config.items():
        if key == "epochs" and config.get("schedule") == "constant":
            continue
        if key == "epochs" and state.config.get(key) != value:
            raise CheckpointError(f"{path}: the checkpointed run has {state.config.get(key)} epochs of a "
                                  f"{config.get('schedule')} schedule, whose learning rates depend on the run's "
                                  f"length; resume with --epochs {state.config.get(key)} (or train with "
                                  f"--schedule constant to extend a run)")
        if state.config.get(key) != value:
            raise CheckpointError(f"{path}: {key} was {state.config.get(key)!r} in the checkpointed run, "
                                  f"now {value!r}")


__all__ = ["save", "load", "check_compatible", "State", "CheckpointError", "FILE"]
