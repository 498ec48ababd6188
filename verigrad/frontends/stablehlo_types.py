"""StableHLO modules: parsing, verification, types and locations (untrusted front end;
the layer below ``stablehlo_rules`` and ``stablehlo``).

A train step arrives as the text of one StableHLO module. ``parse`` reads and verifies
it with jaxlib's MLIR bindings (errors carry ``line:col``); ``signature`` reads the
argument and result types of the public ``@main``; ``import_module`` interprets the
module over kernel terms: each argument becomes a ``Var`` (named after the manifest,
else ``arg0, arg1, ...``) of its concrete shape, each result a closed ``Term`` over
those variables. Private functions reached by ``func.call`` are inlined.

The interpretation is one rule per operation (``stablehlo_rules.RULES``), in the
manner of JAX's interpreters: ``stablehlo.dot_general`` becomes
``Lamda[i, k](Sum[j](a[i, j] b[j, k]))``, ``stablehlo.reduce`` with an ``add`` body a
``Sum``, and so on. An operation without a rule is an error naming it and its line.

This module is a translator, so it can be wrong; ``stablehlo_check.validate``
(translation validation) evaluates the imported terms on random inputs and compares
them with XLA executing the same text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from verigrad.kernel import KernelError, Term, Var
from verigrad.kernel.sizes import VerigradError

# The MLIR Python bindings are semi-public: every use of them is in this module and in
# stablehlo_rules.py, so a version bump of jaxlib touches two files.
from jax._src.interpreters import mlir as _jax_mlir
from jaxlib.mlir import ir


class StableHLOError(VerigradError):
    """Text that does not parse or verify, or that uses an unsupported operation; the
    message names the operation and ``file:line:col``."""


# -- types --------------------------------------------------------------------------------

_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
           "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}


# The element types the importer models, and what it knows of each: a float type's
# exponent and mantissa bits (what a conversion keeps), an integer type's range.
FLOAT_BITS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}
INT_RANGE = {"i1": (0, 1), **{f"i{n}": (-2 ** (n - 1), 2 ** (n - 1) - 1) for n in (8, 16, 32, 64)},
             **{f"ui{n}": (0, 2 ** n - 1) for n in (8, 16, 32, 64)}}


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of an MLIR element type name (``f32`` -> float32)."""
    if dtype == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    try:
        return np.dtype(_DTYPES[dtype])
    except KeyError:
        raise StableHLOError(f"unsupported element type {dtype}") from None


def dtype_name(dtype) -> str:
    """The MLIR element type name of a numpy dtype (float32 -> ``f32``)."""
    dt = np.dtype(dtype)
    if dt.name == "bfloat16":
        return "bf16"
    for name, t in _DTYPES.items():
        if np.dtype(t) == dt:
            return name
    raise StableHLOError(f"no StableHLO element type for {dt}")


@dataclass(frozen=True)
class TensorSpec:
    """Shape and element type of one argument or result (``tensor<64x10xf32>``)."""
    shape: tuple
    dtype: str
    name: str = ""

    def __str__(self):
        dims = "x".join(map(str, self.shape))
        return f"tensor<{dims + 'x' if dims else ''}{self.dtype}>"

    @property
    def np_dtype(self) -> np.dtype:
        return numpy_dtype(self.dtype)

    @property
    def is_float(self) -> bool:
        return self.dtype.startswith(("f", "bf"))

    @property
    def supported(self) -> bool:
        """An element type the importer models: f16, bf16, f32, f64, i1 and the
        signed and unsigned integers of 8 to 64 bits (not f8 types, complex, i4...)."""
        return self.dtype in FLOAT_BITS or self.dtype in INT_RANGE


@dataclass(frozen=True)
class Signature:
    """The argument and result types of ``@main``."""
    inputs: tuple
    outputs: tuple


def tensor_spec(t, where: str = "", name: str = "") -> TensorSpec:
    """A ``TensorSpec`` from an MLIR type; only ranked, static tensors."""
    if not isinstance(t, ir.RankedTensorType):
        raise StableHLOError(f"{where}: {t} is not a ranked tensor type (tuples and tokens are not supported)")
    rt = ir.RankedTensorType(t)
    if not rt.has_static_shape:
        raise StableHLOError(f"{where}: {t} has a dynamic shape; only static shapes are supported")
    return TensorSpec(tuple(int(d) for d in rt.shape), str(rt.element_type), name)


# -- parsing ---------------------------------------------------------------------------------

@dataclass
class Parsed:
    """A parsed and verified module; keeps its MLIR context alive."""
    module: object
    context: object
    path: str
    functions: dict = field(default_factory=dict)

    @property
    def main(self):
        fn = self.functions.get("main")
        if fn is None:
            raise StableHLOError(f"{self.path}: no func.func @main")
        vis = fn.attributes["sym_visibility"] if "sym_visibility" in fn.attributes else None
        if vis is not None and ir.StringAttr(vis).value != "public":
            raise StableHLOError(f"{self.path}: @main is private; the entry point must be public")
        return fn


_LOC = re.compile(r'loc\("[^"]*":(\d+):(\d+)\)')


def where(path: str, location) -> str:
    """``path:line:col`` of an MLIR location (``path`` alone if it has none)."""
    m = _LOC.search(str(location))
    return f"{path}:{m.group(1)}:{m.group(2)}" if m else path


def parse(source, path: str = "<text>") -> Parsed:
    """Parse and verify module text (``str`` or ``bytes``) with the StableHLO, CHLO,
    func and Shardy dialects; an error names ``path:line:col``."""
    if isinstance(source, Parsed):
        return source
    text = source.decode() if isinstance(source, bytes) else str(source)
    ctx = _jax_mlir.make_ir_context()
    with ctx:
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            diags = getattr(e, "error_diagnostics", None) or []
            if diags:
                msg = "; ".join(f"{where(path, d.location)}: {d.message}" for d in diags)
            else:
                msg = f"{path}: {str(e).splitlines()[-1]}"
            raise StableHLOError(msg) from None
        functions = {}
        for op in module.body.operations:
            if op.operation.name == "func.func":
                functions[ir.StringAttr(op.attributes["sym_name"]).value] = op
    return Parsed(module, ctx, path, functions)


def _result_attr(fn, k: int, key: str):
    if "res_attrs" not in fn.attributes:
        return None
    attrs = ir.ArrayAttr(fn.attributes["res_attrs"])
    d = ir.DictAttr(attrs[k])
    return ir.StringAttr(d[key]).value if key in d else None


def signature(source, path: str = "<text>") -> Signature:
    """The types of ``@main``'s arguments and results."""
    p = parse(source, path)
    with p.context:
        fn = p.main
        ft = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        loc = where(p.path, fn.location)
        ins = tuple(tensor_spec(t, f"{loc}: argument {k} of @main", f"arg{k}") for k, t in enumerate(ft.inputs))
        outs = tuple(tensor_spec(t, f"{loc}: result {k} of @main", _result_attr(fn, k, "jax.result_info") or f"result{k}")
                     for k, t in enumerate(ft.results))
    return Signature(ins, outs)
