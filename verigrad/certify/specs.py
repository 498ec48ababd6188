"""Argument shapes as users write them (untrusted parsing).

A shape is any of

- a string of comma-separated dimensions: ``"n,d"``, ``"n+1, 2*n"``, ``"8"``, ``""``
  for a scalar, optionally with a dtype after a colon (``"n:int32"``, ``"n,k:bool"``);
- a tuple or list of dimensions, each an integer, a string (``"n"``, ``"n+1"``), a
  kernel ``SizeSym``, or a JAX symbolic dimension (``jax.export.symbolic_shape("n, d")``):
  ``("n", "d")``, ``(n, 8)``, ``()`` for a scalar;
- a ``jax.ShapeDtypeStruct`` (its shape as above, its dtype);
- an ``ArgSpec``.

Anything else given for an argument is a Python value to hold it at (``split_shapes``),
as for ``nondiff_argnums``. Size symbols are sizes ``>= 1``, or ``>= minimum[name]``;
a dimension that is not provably ``>= 1`` for every value of its symbols (``-1``,
``n-5``) is refused with a ``SpecError`` naming the argument.
"""
from __future__ import annotations

import ast
import re

from verigrad.errors import CommandLineError
from verigrad.frontends.jaxpr import ArgSpec, JaxprImportError

DTYPES = ("float", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint32", "bool")
_DIM = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$|^\d+$|^[A-Za-z_0-9+\-*() ]+$")


class SpecError(JaxprImportError, CommandLineError):
    """A shape that cannot be read (on the command line: an argument error, exit code 2)."""


def _size(expr: str, minimum: dict):
    """The kernel polynomial of a dimension expression (``+ - *``, integers, symbols)."""
    from verigrad.kernel.sizes import SizeSym, as_poly

    def go(node):
        if isinstance(node, ast.Expression):
            return go(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return as_poly(node.value)
        if isinstance(node, ast.Name):
            return as_poly(SizeSym(node.id, max(1, int(minimum.get(node.id, 1)))))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            p = go(node.operand)
            return -p if isinstance(node.op, ast.USub) else p
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = go(node.left), go(node.right)
            return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
        raise ValueError(expr)

    return go(ast.parse(expr, mode="eval"))


def check_dimension(name: str, d: str, minimum: dict | None = None) -> str:
    """``d`` if it is a dimension provably ``>= 1`` (symbols ``>= minimum``), else a
    ``SpecError`` naming argument ``name``. Without ``minimum`` (the lower bounds are
    not known yet) only a dimension without symbols is checked (``-1``, ``0``, ``2-3``);
    ``n-5`` waits for the bounds."""
    from verigrad.kernel.sizes import nonneg
    d = d.strip()
    if not d or not _DIM.match(d):
        raise SpecError(f"argument {name}: {d!r} is not a dimension (a symbol such as n, an integer, "
                        "or an expression such as n+1 or 2*n)")
    try:
        size = _size(d, minimum or {})
    except (ValueError, SyntaxError, RecursionError):
        raise SpecError(f"argument {name}: {d!r} is not a dimension (use + - * of integers and symbols)") from None
    if not nonneg(size - 1) and (minimum is not None or not re.search(r"[A-Za-z_]", d)):
        at = ", ".join(f"{k} >= {v}" for k, v in sorted((minimum or {}).items()) if v > 1)
        raise SpecError(f"argument {name}: dimension {d} must be at least 1 for every size "
                        f"(symbols are >= 1{'; ' + at if at else ''})")
    return d


def parse_spec(name: str, text: str, minimum: dict | None = None) -> ArgSpec:
    """``ArgSpec`` from ``DIMS[:DTYPE]``."""
    dims, _, dtype = text.partition(":")
    dtype = dtype.strip() or "float"
    if dtype not in DTYPES:
        raise SpecError(f"argument {name}: unknown dtype {dtype!r} (known: {', '.join(DTYPES)})")
    dims = dims.strip()
    parts = tuple(check_dimension(name, d, minimum) for d in dims.split(",")) if dims else ()
    return ArgSpec(name, parts, dtype)


def parse_option(text: str, minimum: dict | None = None) -> ArgSpec:
    """``ARG=DIMS[:DTYPE]`` (the command line's ``--shape``)."""
    name, eq, rest = text.partition("=")
    name = name.strip()
    if not eq or not name.isidentifier():
        raise SpecError(f"--shape {text!r}: expected ARG=DIMS, e.g. x=n,d (ARG= for a scalar)")
    return parse_spec(name, rest, minimum)


def _dimension(name: str, d, minimum) -> str:
    """One dimension of a tuple as text: an int, a string, a ``SizeSym``, a JAX symbolic dim."""
    if isinstance(d, bool):
        raise SpecError(f"argument {name}: {d!r} is not a dimension")
    if isinstance(d, int) or type(d).__name__ in ("int64", "int32", "intc"):
        if int(d) < 1:
            raise SpecError(f"argument {name}: dimension {int(d)} must be at least 1")
        return str(int(d))
    if isinstance(d, str):
        return check_dimension(name, d, minimum)
    from verigrad.kernel.sizes import SizeSym
    if isinstance(d, SizeSym):
        return d.name
    if type(d).__module__.startswith("jax") and not isinstance(d, (tuple, list)):
        text = str(d).replace(" ", "")          # a symbolic dimension prints as its expression
        return check_dimension(name, text, minimum)
    raise SpecError(f"argument {name}: {d!r} is not a dimension (an integer, a string such as 'n' or 'n+1', a "
                    "SizeSym, or a JAX symbolic dimension)")


def _dtype(name: str, dtype) -> str:
    import numpy as np
    text = np.dtype(dtype).name
    if text not in DTYPES:
        raise SpecError(f"argument {name}: dtype {text} is not supported (known: {', '.join(DTYPES)})")
    return text


def _is_struct(value) -> bool:
    return type(value).__name__ == "ShapeDtypeStruct" and hasattr(value, "shape") and hasattr(value, "dtype")


class Held:
    """A value to hold an argument at, never read as a shape: ``--static`` values, where
    a string (``'flash'``) or a tuple of integers (``(1, 2)``) is the value itself."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def to_spec(name: str, value, minimum: dict | None = None) -> ArgSpec | None:
    """The ``ArgSpec`` of a shape given for argument ``name`` (see the module's
    docstring), or None when ``value`` is not a shape (a value to hold the argument at)."""
    if isinstance(value, Held):
        return None
    if isinstance(value, ArgSpec):
        return ArgSpec(name, tuple(check_dimension(name, d, minimum) for d in value.dims), value.dtype)
    if isinstance(value, str):
        return parse_spec(name, value, minimum)
    if _is_struct(value):
        return ArgSpec(name, tuple(_dimension(name, d, minimum) for d in value.shape), _dtype(name, value.dtype))
    if isinstance(value, (tuple, list)) and all(_looks_like_dimension(d) for d in value):
        return ArgSpec(name, tuple(_dimension(name, d, minimum) for d in value))
    return None


def _looks_like_dimension(d) -> bool:
    if isinstance(d, bool):
        return False
    if isinstance(d, (int, str)):
        return True
    from verigrad.kernel.sizes import SizeSym
    return isinstance(d, SizeSym) or (type(d).__module__.startswith("jax") and not isinstance(d, (tuple, list)))


def split_shapes(shapes, minimum: dict | None = None) -> tuple[dict, dict]:
    """``({name: ArgSpec}, {name: value held})`` from ``shapes``: a dict from argument
    name to a shape (above) or to a Python value to hold it at."""
    if not isinstance(shapes, dict):
        raise SpecError(f"shapes must be a dict from argument name to shape, e.g. {{'x': 'n, d'}}; got "
                        f"{type(shapes).__name__}")
    specs, statics = {}, {}
    for k, v in shapes.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise SpecError(f"shapes: {k!r} is not an argument name")
        spec = to_spec(k, v, minimum)
        if spec is None:
            statics[k] = v.value if isinstance(v, Held) else v
        else:
            specs[k] = spec
    return specs, statics
