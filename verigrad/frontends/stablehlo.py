"""StableHLO text into kernel terms (untrusted front end).

A train step arrives as the text of one StableHLO module. ``parse`` reads and verifies
it with jaxlib's MLIR bindings (errors carry ``line:col``); ``signature`` reads the
argument and result types of the public ``@main`` (both in ``stablehlo_types``);
``import_module`` interprets the module over kernel terms: each argument becomes a
``Var`` (named after the manifest, else ``arg0, arg1, ...``) of its concrete shape,
each result a closed ``Term`` over those variables. Private functions reached by
``func.call`` are inlined.

The interpretation is one rule per operation (``stablehlo_rules.RULES``), in the
manner of JAX's interpreters: ``stablehlo.dot_general`` becomes
``Lamda[i, k](Sum[j](a[i, j] b[j, k]))``, ``stablehlo.reduce`` with an ``add`` body a
``Sum``, and so on. An operation without a rule is an error naming it and its line.

This module is a translator, so it can be wrong; ``stablehlo_check.validate``
(translation validation) evaluates the imported terms on random inputs and compares
them with XLA executing the same text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from verigrad.kernel import KernelError, Term, Var
from verigrad.kernel import terms as T

from . import stablehlo_rules as R
from .stablehlo_types import (FLOAT_BITS, INT_RANGE, Parsed, Signature, StableHLOError, TensorSpec, dtype_name,
                              numpy_dtype, parse, signature, where)


# -- import ---------------------------------------------------------------------------------

@dataclass
class Imported:
    """``@main`` as kernel terms: ``results[k]`` is result ``k`` over ``inputs``.

    ``constants`` holds the values of dense constants too large to write as terms
    (each is a ``Var`` named after its line); evaluate with them in the environment."""
    inputs: tuple
    results: tuple
    result_names: tuple
    signature: Signature
    constants: dict = field(default_factory=dict)

    def result(self, name: str) -> Term:
        try:
            return self.results[self.result_names.index(name)]
        except ValueError:
            raise KeyError(f"no result named {name!r} (results: {', '.join(self.result_names)})") from None


def input_var(name: str, spec: TensorSpec) -> Var:
    """The variable of an argument of ``@main``: integer-valued for an integer type
    (where the kernel has that fact)."""
    if not spec.supported:
        raise StableHLOError(f"argument {name} of @main: element type {spec.dtype} is not supported "
                             "(f16, bf16, f32, f64, i1, i8-i64, ui8-ui64)")
    facts = ("integer",) if spec.dtype in INT_RANGE and "integer" in T.FACTS else ()
    return Var(name, spec.shape, facts)


def import_module(source, names=None, result_names=None, path: str = "<text>") -> Imported:
    """Interpret ``@main`` over kernel terms.

    ``names`` (one per argument) name the input variables, ``result_names`` the
    results; the defaults are ``arg0, ...`` and JAX's ``result_info`` (or
    ``result0, ...``)."""
    p = parse(source, path)
    sig = signature(p)
    names = list(names) if names is not None else [s.name for s in sig.inputs]
    if len(names) != len(sig.inputs):
        raise StableHLOError(f"{p.path}: {len(names)} argument names for the {len(sig.inputs)} arguments of @main")
    if len(set(names)) != len(names):
        raise StableHLOError(f"{p.path}: argument names are not distinct: {names}")
    rnames = list(result_names) if result_names is not None else [s.name for s in sig.outputs]
    if len(rnames) != len(sig.outputs):
        raise StableHLOError(f"{p.path}: {len(rnames)} result names for the {len(sig.outputs)} results of @main")
    inputs = []
    for name, spec in zip(names, sig.inputs):
        if 0 in spec.shape:
            raise StableHLOError(f"{p.path}: argument {name} of @main is empty ({spec}); empty tensors are not supported")
        inputs.append(input_var(name, spec))
    interp = R.Interpreter(p)
    with p.context:
        try:
            results = interp.call(p.main, list(inputs))
        except KernelError as e:  # a rule built an ill-formed term: an importer bug
            raise StableHLOError(f"{interp.current}: the importer built an ill-formed term: {e}") from None
    for k, r in enumerate(results):
        if not isinstance(r, Term):
            raise StableHLOError(f"{p.path}: result {rnames[k]} of @main is a non-finite constant")
    return Imported(tuple(inputs), tuple(results), tuple(rnames), sig, dict(interp.constants))


__all__ = ["StableHLOError", "TensorSpec", "Signature", "Parsed", "Imported", "parse", "signature",
           "import_module", "input_var", "numpy_dtype", "dtype_name", "where", "FLOAT_BITS", "INT_RANGE"]
