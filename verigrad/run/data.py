"""The digits data set: scikit-learn's bundled 8x8 handwritten digits (no download).

1,797 images of 10 classes, pixel values 0..16, scaled to ``[0, 1]`` as float32 and
flattened to 64 features (``image_shape`` gives the 8x8 view).

The split is fixed: a stratified 80/20 split (``train_test_split(test_size=0.2,
stratify=labels, random_state=0)``), so 1,437 training and 360 test images, the same
on every machine and in every run.

Targets are one-hot rows, label-smoothed by ``s``: ``(1 - s) one_hot + s / classes``.

``batches`` shuffles the training set with a numpy ``Generator`` each epoch and
**drops the last partial batch** (a train step has a fixed batch size; with a new
shuffle each epoch every example is still seen). ``eval_batches`` covers every example
once: the last batch is **padded** by repeating the first rows, and its ``valid``
count says how many rows are real.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

CLASSES = 10
FEATURES = 64
SPLIT_SEED = 0
TEST_FRACTION = 0.2


@dataclass(frozen=True)
class Split:
    x_train: np.ndarray   # float32 [1437, 64] in [0, 1]
    y_train: np.ndarray   # int64 labels [1437]
    x_test: np.ndarray
    y_test: np.ndarray

    image_shape = (8, 8)


@lru_cache(maxsize=1)
def digits() -> Split:
    """The fixed 80/20 split of scikit-learn's digits."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=TEST_FRACTION, stratify=y, random_state=SPLIT_SEED)
    for a in (xtr, xte, ytr, yte):
        a.setflags(write=False)
    return Split(xtr, ytr, xte, yte)


def targets(labels: np.ndarray, classes: int = CLASSES, smoothing: float = 0.0) -> np.ndarray:
    """Label-smoothed one-hot rows ``(1 - s) e_y + s / classes`` (float32)."""
    if not 0 <= smoothing < 1:
        raise ValueError(f"label smoothing must be in [0, 1), got {smoothing}")
    out = np.full((len(labels), classes), smoothing / classes, dtype=np.float32)
    out[np.arange(len(labels)), labels] += np.float32(1 - smoothing)
    return out


def batches(x: np.ndarray, labels: np.ndarray, batch: int, rng: np.random.Generator, classes: int = CLASSES,
            smoothing: float = 0.0):
    """One epoch of shuffled ``(x, targets, labels)`` batches; the last partial batch
    is dropped. The shuffle draws from ``rng`` (its state is what a checkpoint saves)."""
    if batch > len(x):
        raise ValueError(f"batch {batch} is larger than the {len(x)} training examples")
    order = rng.permutation(len(x))
    for start in range(0, len(x) - batch + 1, batch):
        idx = order[start:start + batch]
        yield x[idx], targets(labels[idx], classes, smoothing), labels[idx]


def steps_per_epoch(n: int, batch: int) -> int:
    return n // batch


def eval_batches(x: np.ndarray, labels: np.ndarray, batch: int):
    """``(x, labels, valid)`` covering every example once, in order; the last batch is
    padded to ``batch`` rows by repeating rows from the start, of which only the
    first ``valid`` count."""
    for start in range(0, len(x), batch):
        idx = np.arange(start, start + batch) % len(x)
        yield x[idx], labels[idx], min(batch, len(x) - start)


__all__ = ["digits", "targets", "batches", "eval_batches", "steps_per_epoch", "Split", "CLASSES", "FEATURES"]
