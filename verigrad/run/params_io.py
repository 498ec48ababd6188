r"""Trained parameters in a standard format: ``.safetensors`` or ``.npz``.

Names are the manifest's (``params/conv0/W``, ...), so a file written here is read
back by ``verigrad predict`` (and by any safetensors or numpy reader) without a
mapping. ``.safetensors`` is written by this module (the format is small: an 8-byte
little-endian header length, a JSON header naming each tensor's dtype, shape and byte
range, then the raw little-endian bytes); ``__metadata__`` records the network, the
forward module's sha256 and what else the trainer passes (strings only, as the
format requires).

``load`` checks what it reads: a header that parses, byte ranges inside the file
that tile the data exactly, a known dtype; anything else is a ``ParamsError`` (one
line).
"""
from __future__ import annotations

import json
import os
import struct
import tempfile
from pathlib import Path

import numpy as np
from verigrad.errors import VerigradError

SUFFIXES = (".safetensors", ".npz")
_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "BF16": None, "I64": np.int64, "I32": np.int32,
           "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items() if v is not None}
_HEADER_LIMIT = 100 * 1024 * 1024


class ParamsError(VerigradError, ValueError):
    """A parameter file that cannot be written or read; one line."""


def save(path, arrays: dict, metadata: dict | None = None) -> Path:
    """Write ``arrays`` (name -> array) to ``path`` (``.safetensors`` or ``.npz`` by its
    suffix), atomically (a temporary file in the same folder, then renamed)."""
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise ParamsError(f"{path}: the parameters' file should end in .safetensors or .npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".params-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if path.suffix == ".npz":
                np.savez(f, **{k: np.asarray(v) for k, v in arrays.items()})
            else:
                f.write(safetensors_bytes(arrays, metadata))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def safetensors_bytes(arrays: dict, metadata: dict | None = None) -> bytes:
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, value in arrays.items():
        a = np.ascontiguousarray(np.asarray(value))
        if a.dtype not in _NAMES:
            raise ParamsError(f"{name}: dtype {a.dtype} has no safetensors name")
        data = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _NAMES[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)                  # the data starts 8-byte aligned
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def load(path) -> tuple:
    """``(arrays, metadata)`` from a ``.safetensors`` or ``.npz`` file."""
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path}: no such parameter file")
    if path.suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}, {}
        except (OSError, ValueError, EOFError) as e:
            raise ParamsError(f"{path}: not a readable .npz file ({' '.join(str(e).split())})") from None
    if path.suffix != ".safetensors":
        raise ParamsError(f"{path}: the parameters' file should end in .safetensors or .npz")
    return read_safetensors(path.read_bytes(), str(path))


def read_safetensors(blob: bytes, where: str = "<bytes>") -> tuple:
    if len(blob) < 8:
        raise ParamsError(f"{where}: too short for a safetensors file ({len(blob)} bytes)")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > min(len(blob) - 8, _HEADER_LIMIT):
        raise ParamsError(f"{where}: the header length {n} runs past the file ({len(blob)} bytes)")
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ParamsError(f"{where}: the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise ParamsError(f"{where}: the header is not a JSON object")
    data = memoryview(blob)[8 + n:]
    metadata = header.pop("__metadata__", {}) or {}
    arrays, spans = {}, []
    for name, entry in header.items():
        try:
            dtype, shape, (lo, hi) = entry["dtype"], [int(d) for d in entry["shape"]], entry["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise ParamsError(f"{where}: tensor {name!r} lacks dtype, shape or data_offsets") from None
        if _DTYPES.get(dtype) is None:
            raise ParamsError(f"{where}: tensor {name!r} has dtype {dtype!r}, which this reader does not take")
        np_dtype = np.dtype(_DTYPES[dtype]).newbyteorder("<")
        if not (isinstance(lo, int) and isinstance(hi, int) and 0 <= lo <= hi <= len(data)):
            raise ParamsError(f"{where}: tensor {name!r} has byte range [{lo}, {hi}) outside the data "
                              f"({len(data)} bytes)")
        if any(d < 0 for d in shape) or (hi - lo) != int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize:
            raise ParamsError(f"{where}: tensor {name!r} of shape {shape} {dtype} does not fill its {hi - lo} bytes")
        arrays[name] = np.frombuffer(data[lo:hi], dtype=np_dtype).reshape(shape).astype(np_dtype.newbyteorder("="))
        spans.append((lo, hi, name))
    end = 0
    for lo, hi, name in sorted(spans):
        if lo != end:
            raise ParamsError(f"{where}: tensor {name!r} starts at byte {lo}, not {end} (overlap or gap)")
        end = hi
    if end != len(data):
        raise ParamsError(f"{where}: {len(data) - end} bytes after the last tensor")
    return arrays, metadata


def check_against(arrays: dict, ports, where: str) -> dict:
    """The arrays the ports (a module's ``param`` inputs) need, as float32, each
    present with its shape and finite."""
    out = {}
    for p in ports:
        if p.name not in arrays:
            raise ParamsError(f"{where} has no {p.name!r} (it has: {', '.join(list(arrays)[:8])}"
                              f"{', ...' if len(arrays) > 8 else ''})")
        a = np.asarray(arrays[p.name])
        if tuple(a.shape) != tuple(p.shape):
            raise ParamsError(f"{where}: {p.name} has shape {list(a.shape)}, the forward takes {list(p.shape)}")
        if a.dtype.kind not in "fiu":
            raise ParamsError(f"{where}: {p.name} has dtype {a.dtype}, not a number")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ParamsError(f"{where}: {p.name} has NaN or infinite values")
        out[p.name] = a.astype(np.float32)
    return out


__all__ = ["ParamsError", "SUFFIXES", "check_against", "load", "read_safetensors", "safetensors_bytes", "save"]
