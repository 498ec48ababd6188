r"""Your data: arrays from an ``.npz`` file or a Python entry point, checked before any
step runs.

Sources (``load(spec, test=None)``):

- ``train.npz`` with arrays ``x`` (examples) and ``y`` (integer labels ``0 .. C-1``),
  and optionally ``x_test`` / ``y_test``; ``test=`` a second ``.npz`` with ``x`` and
  ``y`` is the test split instead. With neither, a fixed 20 % of the examples (a
  seeded permutation) is held out for testing.
- ``FILE.py:NAME``: ``NAME`` is, or is a function of no arguments returning, either
  arrays (``(x, y)``, ``(x, y, x_test, y_test)`` or a dict with those keys) or an
  iterable of ``(x, y)`` batches (a list, a generator function called again every
  epoch, or any object with ``__iter__``; ``len()`` gives the steps per epoch).
- From Python: ``from_arrays(x, y, ...)`` and ``Stream(batches, ...)``.

What is checked, each a ``DataError`` of one line naming the array, the index and the
value where that helps:

- ``x`` holds real numbers (float or integer dtype; bool, complex, strings and
  pickled objects are refused), has at least one example, and no NaN or infinity;
- ``y`` is a vector of whole numbers (an integer dtype, or floats that are whole),
  one per example, ``0 <= y < classes``;
- each example has the network's input shape, given as is, flattened (``(N, 64)``
  for an ``(8, 8, 1)`` input) or without trailing axes of size 1 (``(N, 8, 8)``);
  any other shape with the same number of values is refused (it would be a silent
  transpose);
- the training split has at least one batch of examples.

Examples are cast to float32 (the train step's dtype).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from verigrad.errors import VerigradError

TEST_FRACTION = 0.2
SPLIT_SEED = 0


class DataError(VerigradError, ValueError):
    """Data that cannot be trained on; the message is one line naming the problem."""


# ---------------------------------------------------------------------------------
# Checks


def check_x(x, where: str = "x") -> np.ndarray:
    """``x`` as a numeric array with examples along axis 0 and finite values."""
    try:
        a = np.asarray(x)
    except Exception as e:  # noqa: BLE001 - ragged lists and the like
        raise DataError(f"{where} is not an array ({type(e).__name__}: {e})") from None
    if a.dtype == object:
        raise DataError(f"{where} is an array of Python objects; give numbers (float or integer)")
    if a.dtype.kind not in "fiu":
        raise DataError(f"{where} has dtype {a.dtype}; examples must be real numbers (float or integer)")
    if a.ndim < 1 or a.shape[0] == 0:
        raise DataError(f"{where} has no examples (shape {tuple(a.shape)})")
    if a.ndim < 2:
        raise DataError(f"{where} has shape {tuple(a.shape)}: one value per example; give examples along axis 0 "
                        "and their values along the others")
    if a.dtype.kind == "f":
        for bad, what in ((np.isnan(a), "NaN"), (np.isinf(a), "infinite")):
            if bad.any():
                idx = tuple(int(i) for i in np.argwhere(bad)[0])
                raise DataError(f"{where} has {int(bad.sum())} {what} value(s), the first at {_name(where)}{list(idx)}")
    with np.errstate(over="ignore"):
        f = a.astype(np.float32)
    if a.dtype.kind == "f" and np.isinf(f).any():
        idx = tuple(int(i) for i in np.argwhere(np.isinf(f))[0])
        raise DataError(f"{where}{list(idx)} = {a[idx]!r} overflows float32 (the train step's dtype)")
    return f


def check_y(y, n: int | None = None, where: str = "y", classes: int | None = None) -> np.ndarray:
    """``y`` as int64 labels ``>= 0`` (and ``< classes`` when given), ``n`` of them."""
    try:
        a = np.asarray(y)
    except Exception as e:  # noqa: BLE001
        raise DataError(f"{where} is not an array ({type(e).__name__}: {e})") from None
    if a.dtype == object or a.dtype.kind not in "fiu":
        raise DataError(f"{where} has dtype {a.dtype}; labels must be whole numbers 0 .. classes-1")
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise DataError(f"{where} has shape {tuple(a.shape)}; labels are one class index per example, shape (N,)"
                        + (" (not one-hot rows)" if a.ndim == 2 else ""))
    if n is not None and len(a) != n:
        raise DataError(f"{where} has {len(a)} labels for {n} examples")
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a)
        if bad.any():
            i = int(np.argmax(bad))
            raise DataError(f"{where}[{i}] = {a[i]}: labels must be whole numbers")
        frac = a != np.round(a)
        if frac.any():
            i = int(np.argmax(frac))
            raise DataError(f"{where}[{i}] = {a[i]} is not a whole number; labels are class indices 0 .. classes-1")
    if len(a) and a.min() < 0:
        i = int(np.argmin(a))
        raise DataError(f"{where}[{i}] = {a[i]:g} is negative; labels are class indices 0 .. classes-1")
    labels = a.astype(np.int64)
    if classes is not None:
        check_range(labels, classes, where)
    return labels


def check_range(labels: np.ndarray, classes: int, where: str = "y"):
    if len(labels) and labels.max() >= classes:
        i = int(np.argmax(labels >= classes))
        raise DataError(f"{where}[{i}] = {labels[i]} is out of range for {classes} classes (labels 0 .. {classes - 1})")


def fit_shape(x: np.ndarray, example: tuple, where: str = "x") -> np.ndarray:
    """``x`` with examples of shape ``example``: as given, flattened, or without
    trailing axes of size 1; anything else is refused."""
    example = tuple(int(d) for d in example)
    got = tuple(x.shape[1:])
    if got == example:
        return x
    size = math.prod(example)
    squeezed = example
    while len(squeezed) > 1 and squeezed[-1] == 1:
        squeezed = squeezed[:-1]
    if got == (size,) or got == squeezed:
        return x.reshape((x.shape[0],) + example)
    raise DataError(f"{where} has examples of shape {got} ({math.prod(got)} values); the network takes {example}"
                    + (f" (give them as {example} or flattened to ({size},))" if len(example) > 1 else ""))


# ---------------------------------------------------------------------------------
# Data sets


@dataclass
class Arrays:
    """A training split and an optional test split (``x_test`` None: no test)."""
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    source: str = "data"
    held_out: bool = False          # the test split was held out of the given examples

    def fitted(self, example: tuple, classes: int, batch: int) -> "Arrays":
        """The split checked against the network: example shape, label range, at
        least one batch of training examples."""
        xs = fit_shape(self.x_train, example, f"{self.source}: x")
        check_range(self.y_train, classes, f"{self.source}: y")
        if len(xs) < batch:
            raise DataError(f"{self.source}: {len(xs)} training examples, fewer than one batch of {batch} "
                            "(a train step takes exactly the batch it was rendered for)")
        xt = yt = None
        if self.x_test is not None:
            xt = fit_shape(self.x_test, example, f"{self.source}: x_test")
            check_range(self.y_test, classes, f"{self.source}: y_test")
            yt = self.y_test
        return Arrays(xs, self.y_train, xt, yt, self.source, self.held_out)


def from_arrays(x, y, x_test=None, y_test=None, *, source: str = "data", hold_out: bool = False) -> Arrays:
    """Check arrays (see the module's list) and make ``Arrays``; with ``hold_out`` and
    no test split, a fixed 20 % of the examples becomes the test split."""
    xs = check_x(x, f"{source}: x")
    ys = check_y(y, len(xs), f"{source}: y")
    if (x_test is None) != (y_test is None):
        raise DataError(f"{source}: x_test and y_test come together (one of them is missing)")
    if x_test is not None:
        xt = check_x(x_test, f"{source}: x_test")
        yt = check_y(y_test, len(xt), f"{source}: y_test")
        if xt.shape[1:] != xs.shape[1:]:
            raise DataError(f"{source}: x_test has examples of shape {tuple(xt.shape[1:])}, x {tuple(xs.shape[1:])}")
        return Arrays(xs, ys, xt, yt, source)
    if hold_out:
        if len(xs) < 2:
            raise DataError(f"{source}: {len(xs)} example(s): too few to hold out a test split (give x_test, y_test)")
        order = np.random.default_rng(SPLIT_SEED).permutation(len(xs))
        k = max(1, int(round(TEST_FRACTION * len(xs))))
        test, train = np.sort(order[:k]), np.sort(order[k:])
        return Arrays(xs[train], ys[train], xs[test], ys[test], source, held_out=True)
    return Arrays(xs, ys, None, None, source)


def digits() -> Arrays:
    """scikit-learn's digits, the fixed 80/20 split of ``verigrad.run.data``."""
    from . import data
    s = data.digits()
    return Arrays(s.x_train, s.y_train, s.x_test, s.y_test, "digits")


class Stream:
    """An iterable of ``(x, y)`` batches, each checked before its step runs: ``batches``
    is an iterable (re-iterated every epoch) or a function of no arguments returning
    one (called every epoch). ``steps_per_epoch`` (or ``len(batches)``) sizes the
    learning-rate schedule; without either, the first epoch counts them (cosine then
    needs ``--schedule constant`` or a length). A final batch with fewer rows than
    the step's batch is dropped, like the digits'."""

    def __init__(self, batches, x_test=None, y_test=None, steps_per_epoch: int | None = None,
                 source: str = "batches"):
        self.batches, self.source = batches, source
        self.steps = steps_per_epoch
        if self.steps is None and not callable(batches) and hasattr(batches, "__len__"):
            self.steps = len(batches)
        self.test = from_arrays(x_test, y_test, source=source) if x_test is not None else None
        self._epochs = 0

    def epoch(self):
        it = self.batches() if callable(self.batches) else self.batches
        if not hasattr(it, "__iter__"):
            raise DataError(f"{self.source}: gives a {type(it).__name__}, not an iterable of (x, y) batches")
        if self._epochs and not callable(self.batches) and iter(it) is it:   # a one-shot iterator, used up
            raise DataError(f"{self.source}: a one-shot iterator gives only one epoch; pass a function that "
                            "returns a new iterator (a generator function) to train for more")
        self._epochs += 1
        return iter(it)

    def checked(self, batch_xy, k: int, example, classes, batch):
        """Batch ``k`` (1-based) as float32 ``x`` of the example shape and int labels;
        ``None`` for a short final batch."""
        where = f"{self.source}: batch {k}"
        if not (isinstance(batch_xy, (tuple, list)) and len(batch_xy) == 2):
            if isinstance(batch_xy, dict) and "x" in batch_xy and "y" in batch_xy:
                batch_xy = (batch_xy["x"], batch_xy["y"])
            else:
                raise DataError(f"{where} is a {type(batch_xy).__name__}, not a pair (x, y)")
        x = check_x(batch_xy[0], f"{where}: x")
        y = check_y(batch_xy[1], len(x), f"{where}: y", classes)
        if len(x) > batch:
            raise DataError(f"{where} has {len(x)} examples; the train step takes batches of {batch}")
        x = fit_shape(x, example, f"{where}: x")
        return None if len(x) < batch else (x, y)


# ---------------------------------------------------------------------------------
# Loading


def load(spec, test=None, hold_out: bool = True):
    """``Arrays`` or a ``Stream`` from ``train.npz`` or ``FILE.py:NAME`` (see the
    module's docstring); ``test`` a ``.npz`` with the test split."""
    spec = str(spec)
    if _is_python(spec):
        data = _from_python(spec, hold_out and test is None)
    else:
        arrays = load_npz(spec, ("x", "y"), ("x_test", "y_test"))
        data = from_arrays(arrays["x"], arrays["y"], arrays.get("x_test"), arrays.get("y_test"),
                           source=Path(spec).name, hold_out=hold_out and test is None)
    if test is not None:
        t = load_npz(str(test), ("x", "y"))
        split = from_arrays(t["x"], t["y"], source=Path(str(test)).name)
        if isinstance(data, Stream):
            data.test = split
        else:
            if data.x_test is not None and not data.held_out:
                raise DataError(f"{data.source} has its own test split (x_test, y_test) and --test gives another; "
                                "give one")
            data = Arrays(data.x_train, data.y_train, split.x_train, split.y_train, data.source)
    return data


def load_npz(path: str, required=("x",), optional=()) -> dict:
    """The named arrays of an ``.npz`` file; a ``DataError`` for a missing file or
    array, or one saved as Python objects."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{path}: no such file")
    try:
        with np.load(p, allow_pickle=False) as z:
            names = list(z.files)
            missing = [k for k in required if k not in names]
            if missing:
                raise DataError(f"{p.name} has no array {missing[0]!r} (it has: {', '.join(names) or 'none'})")
            out = {}
            for k in list(required) + [k for k in optional if k in names]:
                try:
                    out[k] = z[k]
                except ValueError:
                    raise DataError(f"{p.name}: {k} is an array of Python objects (saved with pickle); save "
                                    "numbers") from None
            return out
    except DataError:
        raise
    except (OSError, ValueError, EOFError) as e:
        if p.suffix != ".npz" and not _is_python(path):
            raise DataError(f"{path}: not an .npz file (arrays x, y) nor FILE.py:NAME") from None
        raise DataError(f"{path}: not a readable .npz file ({_line(e)})") from None


def _is_python(spec: str) -> bool:
    file = spec.rsplit(":", 1)[0] if ":" in spec and not spec.endswith(".py") else spec
    return file.endswith(".py")


def _from_python(spec: str, hold_out: bool):
    import importlib.util
    import sys
    file, name = spec.rsplit(":", 1) if ":" in spec and not spec.endswith(".py") else (spec, "data")
    path = Path(file)
    if not path.is_file():
        raise DataError(f"{file}: no such file")
    mod_name = f"_verigrad_data_{abs(hash(str(path.resolve())))}"
    ispec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(ispec)
    sys.modules[mod_name] = module
    try:
        ispec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - the user's file
        raise DataError(f"{path.name}: {type(e).__name__}: {_line(e)}") from None
    finally:
        sys.modules.pop(mod_name, None)
    if not hasattr(module, name):
        raise DataError(f"{path.name} defines no {name!r}")
    return from_python(getattr(module, name), source=f"{path.name}:{name}", hold_out=hold_out)


def from_python(obj, source: str = "data", hold_out: bool = False):
    """Arrays or a stream from a Python object (see ``load``)."""
    if isinstance(obj, (Arrays, Stream)):
        return obj
    import inspect
    if inspect.isgeneratorfunction(obj):
        return Stream(obj, source=source)
    if callable(obj):
        try:
            obj = obj()
        except Exception as e:  # noqa: BLE001
            raise DataError(f"{source}(): {type(e).__name__}: {_line(e)}") from None
        if isinstance(obj, (Arrays, Stream)):
            return obj
    if isinstance(obj, dict):
        if "x" not in obj or "y" not in obj:
            raise DataError(f"{source} gives a dict without {'x' if 'x' not in obj else 'y'!r} (keys: "
                            f"{', '.join(map(str, obj)) or 'none'})")
        return from_arrays(obj["x"], obj["y"], obj.get("x_test"), obj.get("y_test"), source=source, hold_out=hold_out)
    if isinstance(obj, tuple) and len(obj) in (2, 4) and all(isinstance(a, np.ndarray) for a in obj):
        return from_arrays(*obj, source=source, hold_out=hold_out)
    if hasattr(obj, "__iter__") and not isinstance(obj, (str, bytes, np.ndarray)):
        return Stream(obj, source=source)
    raise DataError(f"{source} gives a {type(obj).__name__}; expected arrays (x, y), a dict with x and y, or an "
                    "iterable of (x, y) batches")


def _name(where: str) -> str:
    """The array's own name in a label ``"train.npz: x"`` -> ``x``."""
    return where.rsplit(": ", 1)[-1]


def _line(e) -> str:
    return " ".join(str(e).split()) or type(e).__name__


__all__ = ["Arrays", "DataError", "Stream", "check_x", "check_y", "check_range", "digits", "fit_shape", "from_arrays",
           "from_python", "load", "load_npz"]
