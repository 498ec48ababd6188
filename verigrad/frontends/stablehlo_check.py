"""Translation validation of the StableHLO importer (untrusted, independent oracle).

The importer claims: result ``k`` of ``@main`` is the term ``results[k]``. This module
tests that claim the way compiler people do: run the text with XLA on random inputs,
evaluate the terms on the same inputs with ``verigrad.certify.evaluate`` (float64,
sharing no code with the importer or XLA), and compare. A disagreement is an importer
bug (or an XLA bug) and raises ``TranslationMismatch`` naming the result, the entry and
both values.

Use small shapes: the evaluator is exact but interprets every entry in Python.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verigrad.certify.evaluate import evaluate
from .stablehlo import INT_RANGE, Imported, import_module, parse


class TranslationMismatch(AssertionError):
    """The imported terms and the executed text disagree."""


@dataclass
class ResultCheck:
    name: str
    max_error: float      # max |xla - terms| / (1 + max |xla|) (floats), 0 or inf (integers)
    index: tuple
    expected: float       # XLA's value at ``index``
    got: float            # the terms' value there

    @property
    def ok(self) -> bool:
        return self.max_error <= TOLERANCE

    def __str__(self):
        return (f"{self.name}: max scaled error {self.max_error:.3g} at {list(self.index)} "
                f"(XLA {self.expected:.7g}, imported terms {self.got:.7g})")


TOLERANCE = 1e-4


def random_inputs(imported: Imported, seed: int = 0, positive=()) -> list:
    """One random array per argument, of its dtype: standard normal floats (``|N| +
    0.1`` for the arguments named in ``positive``: second moments, learning rates,
    masks), integers anywhere in their type's range (small ones, negative ones and the
    extremes among them: the importer models every value of the type or refuses),
    random booleans."""
    rng = np.random.default_rng(seed)
    out = []
    for var, spec in zip(imported.inputs, imported.signature.inputs):
        if spec.dtype == "i1":
            x = rng.random(spec.shape) < 0.5
        elif not spec.is_float:
            lo, hi = INT_RANGE[spec.dtype]
            small = rng.integers(max(lo, -8), min(hi, 8), spec.shape, endpoint=True)
            wide = rng.integers(lo, hi, spec.shape, endpoint=True, dtype=spec.np_dtype)
            extreme = np.where(rng.random(spec.shape) < 0.5, lo, hi)
            pick = rng.random(spec.shape)
            x = np.where(pick < 0.5, small, np.where(pick < 0.8, wide, extreme)).astype(spec.np_dtype)
        else:
            x = rng.standard_normal(spec.shape)
            if var.name in positive:
                x = np.abs(x) + 0.1
        out.append(np.asarray(x, dtype=spec.np_dtype))
    return out


def validate(source, imported: Imported | None = None, seed: int = 0, positive=(), inputs=None,
             execute=None, path: str = "<text>") -> list:
    """Compare the imported terms with executing the text; raise on a mismatch.

    ``execute(arrays) -> arrays`` runs the text (default: XLA). Returns one
    ``ResultCheck`` per result."""
    parsed = parse(source, path)
    imported = imported or import_module(parsed)
    inputs = inputs if inputs is not None else random_inputs(imported, seed, positive)
    if execute is None:
        from verigrad.run.backend import compile as compile_text, to_host
        exe = compile_text(str(parsed.module), "xla", names=[v.name for v in imported.inputs], path=parsed.path)
        expected = [to_host(x) for x in exe(*inputs)]
    else:
        expected = [np.asarray(x) for x in execute(inputs)]
    values = {v: np.asarray(x, dtype=np.float64) for v, x in zip(imported.inputs, inputs)}
    values.update(imported.constants)
    checks = []
    for name, term, want, spec in zip(imported.result_names, imported.results, expected, imported.signature.outputs):
        got = np.asarray(evaluate(term, {}, values), dtype=np.float64)
        want = np.asarray(want, dtype=np.float64)
        if spec.is_float:
            err = np.abs(got - want) / (1.0 + np.max(np.abs(want), initial=0.0))
            err = np.where(np.isnan(err), np.inf, err)
        else:                               # integers and booleans: exactly
            err = np.where(got == want, 0.0, np.inf)
        k = np.unravel_index(int(np.argmax(err)), err.shape) if err.size else ()
        checks.append(ResultCheck(name, float(err[k]) if err.size else 0.0, tuple(int(i) for i in k),
                                  float(want[k]) if err.size else 0.0, float(got[k]) if err.size else 0.0))
    bad = [c for c in checks if not c.ok]
    if bad:
        raise TranslationMismatch(f"{parsed.path}: the imported terms disagree with executing the text "
                                  f"(an importer bug): " + "; ".join(map(str, bad)))
    return checks


__all__ = ["validate", "random_inputs", "TranslationMismatch", "ResultCheck", "TOLERANCE"]
