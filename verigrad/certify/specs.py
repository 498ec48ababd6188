"""Argument shapes as users write them (untrusted parsing): ``n,d``, ``n+1,2*n``, ``8``,
an empty string for a scalar, and an optional dtype after a colon (``n:int32``, ``n,k:bool``).
Symbols are sizes >= 1."""
from __future__ import annotations

import re

from verigrad.frontends.jaxpr import ArgSpec, JaxprImportError

DTYPES = ("float", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint32", "bool")
_DIM = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$|^\d+$|^[A-Za-z_0-9+\-*() ]+$")


class SpecError(JaxprImportError):
    """A shape that cannot be read."""


def parse_spec(name: str, text: str) -> ArgSpec:
    """``ArgSpec`` from ``DIMS[:DTYPE]``."""
    dims, _, dtype = text.partition(":")
    dtype = dtype.strip() or "float"
    if dtype not in DTYPES:
        raise SpecError(f"argument {name}: unknown dtype {dtype!r} (known: {', '.join(DTYPES)})")
    dims = dims.strip()
    parts = tuple(d.strip() for d in dims.split(",")) if dims else ()
    for d in parts:
        if not d or not _DIM.match(d):
            raise SpecError(f"argument {name}: {d!r} is not a dimension (a symbol such as n, an integer, "
                            "or an expression such as n+1 or 2*n)")
        if d.isdigit() and int(d) < 1:
            raise SpecError(f"argument {name}: dimension {d} must be at least 1")
    return ArgSpec(name, parts, dtype)


def parse_option(text: str) -> ArgSpec:
    """``ARG=DIMS[:DTYPE]`` (the command line's ``--shape``)."""
    name, eq, rest = text.partition("=")
    name = name.strip()
    if not eq or not name.isidentifier():
        raise SpecError(f"--shape {text!r}: expected ARG=DIMS, e.g. x=n,d (ARG= for a scalar)")
    return parse_spec(name, rest)
