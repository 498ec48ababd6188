"""Command-line values checked before any work is done (untrusted plumbing).

Ranges are argparse types: a value out of range is argparse's own one-line error, exit
code 2 (``verigrad train --batch 0`` says ``argument --batch: must be at least 1, not
0``). Paths are checked by trying them: an output folder is created (with its parents)
and a probe file is written and removed there, so "cannot write" is found in the first
second, not after an epoch of training; the failure is a ``UsageError`` naming the
option, the path and the reason (exit code 3).
"""
from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path

from .errors import UsageError


def _number(text: str, kind):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{'an integer' if kind is int else 'a number'} expected, "
                                         f"not {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"a finite number expected, not {text!r}")
    return value


def at_least(low, kind=int):
    """An argparse type: a number ``>= low``."""
    def read(text):
        value = _number(text, kind)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {text}")
        return value
    read.__name__ = f"{kind.__name__} >= {low}"
    return read


def positive(kind=float):
    """An argparse type: a number ``> 0``."""
    def read(text):
        value = _number(text, kind)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, not {text}")
        return value
    read.__name__ = f"{kind.__name__} > 0"
    return read


def within(low, high, kind=float, high_open=False):
    """An argparse type: a number in ``[low, high]`` (``[low, high)`` with ``high_open``)."""
    def read(text):
        value = _number(text, kind)
        if value < low or value > high or (high_open and value == high):
            raise argparse.ArgumentTypeError(f"must be in [{low}, {high}{')' if high_open else ']'}, not {text}")
        return value
    read.__name__ = f"{kind.__name__} in [{low}, {high}]"
    return read


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def output_folder(path, option: str, create: bool = True) -> Path:
    """``path`` as a folder this process can write into, created (with its parents)
    unless ``create`` is false; ``UsageError`` naming ``option`` otherwise."""
    p = Path(path)
    where = f"{option} {path}" if option else str(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{where}: exists and is not a folder")
    base = _nearest_existing(p.absolute())
    if base.exists() and not base.is_dir():
        raise UsageError(f"{where}: {base} is a file, not a folder")
    if not create and not p.exists():
        probe_dir = base
    else:
        try:
            p.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"{where}: cannot create it ({_reason(e)})") from None
        probe_dir = p
    try:
        fd, probe = tempfile.mkstemp(prefix=".verigrad-probe-", dir=probe_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UsageError(f"{where}: cannot write there ({_reason(e)})") from None
    return p


def output_file(path, option: str) -> Path:
    """``path`` as a file this process can write (its folder created); not written."""
    p = Path(path)
    where = f"{option} {path}" if option else str(path)
    if p.is_dir():
        raise UsageError(f"{where}: is a folder, not a file")
    try:
        folder = output_folder(p.parent, "")
    except UsageError as e:
        raise UsageError(f"{where}: {str(e).split(': ', 1)[-1]}") from None
    return folder / p.name


def input_file(path, option: str) -> Path:
    """``path`` as a readable file; ``UsageError`` naming ``option`` otherwise."""
    p = Path(path)
    where = f"{option} {path}" if option else str(path)
    if not p.exists():
        raise UsageError(f"{where}: no such file")
    if p.is_dir():
        raise UsageError(f"{where}: is a folder, not a file")
    try:
        with open(p, "rb") as f:
            f.read(1)
    except OSError as e:
        raise UsageError(f"{where}: cannot read it ({_reason(e)})") from None
    return p
