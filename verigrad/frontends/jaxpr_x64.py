"""Is the x64 trace the program that runs? (untrusted; the jaxpr importer's guard).

A function is traced with x64 on (float64: the exact reading's values, and what
validation runs), but where x64 is off (JAX's default) the user's program is traced in
32 bits, and Python code may read the dtypes while tracing (``eps = 1e-12 if x.dtype ==
float64 else 1e-6``, a branch on ``arange(1).dtype``): then the x64 trace is another
program than the one that runs (red team RT-38). ``difference`` traces the function again
with x64 off and compares the two programs equation by equation, with 64-bit types read
as 32-bit ones (the importer reads integer widths as they run: ``runtime_dtype``), float
literals and constants rounded to float32, and conversions that become the identity
(``int32 -> int64`` under x64 is ``int32 -> int32``) dropped. Any other difference is
reported; a function that does not trace with x64 off cannot run there, and is certified
as it runs with x64 on.
"""
from __future__ import annotations

import re
import warnings

import numpy as np

_NARROW = {"float64": "float32", "int64": "int32", "uint64": "uint32", "complex128": "complex64",
           "f64": "f32", "i64": "i32", "u64": "u32", "c128": "c64"}
_WIDE_NAME = re.compile(r"\b(" + "|".join(_NARROW) + r")\b")
_FLOAT = re.compile(r"(?<![\w.])-?(?:\d+\.\d*(?:e[-+]?\d+)?|\d+e[-+]?\d+|inf|nan)(?![\w.])")


def _narrow_dtype(dt) -> np.dtype:
    dt = np.dtype(dt)
    return np.dtype(_NARROW.get(dt.name, dt.name))


def _text(x) -> str:
    """A parameter or literal as text, 64-bit names narrowed, floats rounded to float32."""
    s = _WIDE_NAME.sub(lambda m: _NARROW[m.group(1)], str(x))
    return _FLOAT.sub(lambda m: repr(float(np.float32(float(m.group(0))))), s)


def _const(c) -> tuple:
    a = np.asarray(c)
    a = a.astype(_narrow_dtype(a.dtype)) if a.dtype.kind in "fiuc" else a
    return (a.shape, a.dtype.str, a.tobytes())


def _program(jaxpr, consts=(), origins=None) -> list:
    """The equations of ``jaxpr`` as comparable rows: (primitive, parameters, inputs,
    output types), each input a variable's position of definition or a literal's text;
    identity conversions dropped; sub-programs (calls, loops, branches) as rows. The
    equation of each row is appended to ``origins`` (None for the others)."""
    from jax.extend import core as jcore
    names: dict = {}
    for k, v in enumerate(list(jaxpr.constvars) + list(jaxpr.invars)):
        names[v] = ("in", k)
    rows: list = [("consts", tuple(_const(c) for c in consts))]
    origins = [] if origins is None else origins
    origins.append(None)

    def ref(v):
        if isinstance(v, jcore.Literal):
            return ("lit", _text(v.val), _narrow_dtype(v.aval.dtype).name)
        return names.get(v, ("?", str(v)))
    for e in jaxpr.eqns:
        ins = tuple(ref(v) for v in e.invars)
        if e.primitive.name == "convert_element_type" and len(e.invars) == 1 and \
                _narrow_dtype(e.invars[0].aval.dtype) == _narrow_dtype(e.outvars[0].aval.dtype):
            names[e.outvars[0]] = ins[0]       # int32 -> int64 in the x64 trace: the identity where it runs
            continue
        params = tuple(sorted((k, _param(v)) for k, v in e.params.items()))
        for k, v in enumerate(e.outvars):
            names[v] = ("eq", len(rows), k)
        rows.append((e.primitive.name, params, ins, tuple(_narrow_dtype(v.aval.dtype).name for v in e.outvars)))
        origins.append(e)
    rows.append(("out", tuple(ref(v) for v in jaxpr.outvars)))
    origins.append(None)
    return rows


def _param(v):
    from jax.extend import core as jcore
    if isinstance(v, jcore.ClosedJaxpr):
        return tuple(_program(v.jaxpr, v.consts))
    if isinstance(v, jcore.Jaxpr):
        return tuple(_program(v))
    if isinstance(v, (tuple, list)) and any(isinstance(x, (jcore.ClosedJaxpr, jcore.Jaxpr)) for x in v):
        return tuple(_param(x) for x in v)
    if callable(v) and not isinstance(v, type):
        return "<function>"        # rules of custom calls: their bodies are compared where inlined
    return _text(v)


def difference(fn, structs, closed) -> str | None:
    """None if ``fn`` traced with x64 off is the program ``closed`` (its x64 trace at
    ``structs``) with narrower types, else a sentence saying where they first differ."""
    import jax
    small = [jax.ShapeDtypeStruct(st.shape, _narrow_dtype(st.dtype)) for st in structs]
    try:
        with jax.enable_x64(False), warnings.catch_warnings():
            warnings.simplefilter("ignore")          # "float64 is not available": that is the point
            other = jax.make_jaxpr(fn)(*small)
    except Exception:  # noqa: BLE001 - it does not run with x64 off
        return None
    return same_program(closed, other)


def same_program(closed, other) -> str | None:
    """None if the closed jaxpr ``other`` (traced with x64 off) is ``closed`` (traced with
    x64 on) with narrower types, else a sentence saying where they first differ."""
    from .jaxpr_core import where_of
    oa, ob = [], []
    a, b = _program(closed.jaxpr, closed.consts, oa), _program(other.jaxpr, other.consts, ob)
    if a == b:
        return None
    k = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    ea, eb = (oa[k] if k < len(oa) else None), (ob[k] if k < len(ob) else None)
    if ea is None and eb is None:
        return "its constants or results differ"
    show = lambda e: "nothing" if e is None else f"`{_text(e)}` at {where_of(e)}"  # noqa: E731
    return f"{show(ea)} with x64 on, {show(eb)} with x64 off"
