"""Certificates: what was shown about a claim, and how (untrusted record, kernel-made
evidence).

The statuses (ARCHITECTURE.md): PROVED (the kernel proved it for all sizes), CHECKED
(the kernel proved it at the listed concrete sizes only), TESTED (numeric evidence
only), REFUTED (a counterexample), UNKNOWN (none of these; never shown as success).
A PROVED or CHECKED certificate carries the kernel ``Theorem``; it cannot be made
without one.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from verigrad.kernel import Theorem

STATUSES = ("PROVED", "CHECKED", "TESTED", "REFUTED", "UNKNOWN")


@dataclass
class Counterexample:
    """Concrete sizes and inputs (the draw ``inputs_seed`` of the search, from the
    distribution ``distribution``) at which the two sides differ: ``argument`` is the
    cotangent (or 'forward output k') and ``index`` the entry. A confirmed one also
    carries every input as JAX receives it (``inputs``), every cotangent
    (``cotangents``: zero for the outputs not claimed about), the outputs claimed about
    (``outputs``) and the arguments held at Python values (``statics``, as reprs): enough
    to run it again (``replay``, ``save``)."""
    sizes: dict
    argument: str
    index: tuple
    expected: float
    got: float
    inputs_seed: int
    inputs: dict = field(default_factory=dict)
    cotangents: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)
    statics: dict = field(default_factory=dict)
    distribution: str = ""

    def as_dict(self) -> dict:
        import numpy as np
        out = {"sizes": dict(self.sizes), "argument": self.argument, "index": list(self.index),
               "expected": self.expected, "got": self.got, "inputs_seed": self.inputs_seed}
        if self.inputs:
            out["inputs"] = {k: np.asarray(v).tolist() for k, v in self.inputs.items()}
            out["dtypes"] = {k: str(np.asarray(v).dtype) for k, v in self.inputs.items()}
            out["cotangents"] = {k: np.asarray(v).tolist() for k, v in self.cotangents.items()}
            out["outputs"] = list(self.outputs)
            out["statics"] = dict(self.statics)
            out["distribution"] = self.distribution
        return out

    def __str__(self):
        sz = ", ".join(f"{k}={v}" for k, v in self.sizes.items()) or "no sizes"
        where = f"draw {self.inputs_seed}" + (f", {self.distribution}" if self.distribution else "")
        expected, got = shown_apart(self.expected, self.got)
        return (f"at {sz} ({where}), {self.argument}[{', '.join(map(str, self.index))}]: "
                f"expected {expected}, got {got}{difference(self.expected, self.got)}")

    def details(self) -> list:
        """Lines showing every input and cotangent (small arrays in full)."""
        import numpy as np
        lines = []
        with np.printoptions(precision=6, suppress=False, threshold=200, linewidth=100):
            for k, v in self.inputs.items():
                lines.append(f"  {k} = {_show(np.asarray(v))}")
            for k, v in self.cotangents.items():
                lines.append(f"  {k} = {_show(np.asarray(v))}")
        for k, v in self.statics.items():
            lines.append(f"  {k} = {v} (held fixed)")
        if self.argument.startswith("forward output"):
            lines.append(f"  {self.argument}[{', '.join(map(str, self.index))}]: f computes {self.expected!r}, "
                         f"fwd computes {self.got!r}")
        else:
            outs = ", ".join(map(str, self.outputs))
            lines.append(f"  the cotangent of output{'s' if len(self.outputs) != 1 else ''} {outs} as above; "
                         f"d{self.argument}[{', '.join(map(str, self.index))}]: J^T dy = {self.expected!r} "
                         f"(JAX), the backward returns {self.got!r}")
        return lines

    def save(self, path: str):
        """Write an ``.npz``: one array per input (its name) and cotangent (``dy`` ...), and
        ``meta``, a JSON string with the rest (sizes, argument, index, the two values)."""
        import json as _json
        import numpy as np
        arrays = {f"input:{k}": np.asarray(v) for k, v in self.inputs.items()}
        arrays.update({f"cotangent:{k}": np.asarray(v) for k, v in self.cotangents.items()})
        meta = {k: v for k, v in self.as_dict().items() if k not in ("inputs", "cotangents")}
        np.savez(path, meta=np.asarray(_json.dumps(meta)), **arrays)


def _show(a) -> str:
    import numpy as np
    text = np.array2string(a, separator=", ") if a.ndim else repr(a.item())
    return text.replace("\n", "\n      ")


def load_counterexample(path: str) -> Counterexample:
    """A counterexample written by ``Counterexample.save``."""
    import json as _json
    import numpy as np
    with np.load(path, allow_pickle=False) as z:
        meta = _json.loads(str(z["meta"]))
        inputs = {k.split(":", 1)[1]: z[k] for k in z.files if k.startswith("input:")}
        cots = {k.split(":", 1)[1]: z[k] for k in z.files if k.startswith("cotangent:")}
    return Counterexample(meta["sizes"], meta["argument"], tuple(meta["index"]), meta["expected"], meta["got"],
                          meta["inputs_seed"], inputs, cots, meta.get("outputs", []), meta.get("statics", {}),
                          meta.get("distribution", ""))


ROUNDING = 1e-12     # a value this small is shown as 0 (float64 rounding of an exact zero)


def shown_apart(a: float, b: float, digits: int = 6) -> tuple[str, str]:
    """``a`` and ``b`` as text with enough significant digits that they read different
    (6 at least, up to 17), so that a difference never looks like noise: 0.0496898 and
    0.0497 become 0.04968977 and 0.04970012. A value within ``ROUNDING`` of zero reads
    ``0`` (with its float value after it when that is not exactly 0)."""
    def one(x: float, p: int) -> str:
        if x != x or x in (float("inf"), float("-inf")):
            return str(x)
        if abs(x) < ROUNDING:
            return "0" if x == 0 else f"0 (rounding: {x:.2g})"
        return f"{x:.{p}g}"
    p = digits
    while p < 17 and one(a, p) == one(b, p) and a != b:
        p += 1
    return one(a, p), one(b, p)


def difference(a: float, b: float) -> str:
    """`` (differs by D, relatively R)`` for two finite values, else ''."""
    try:
        d = abs(float(b) - float(a))
    except (TypeError, ValueError):
        return ""
    if d != d or d in (float("inf"),) or d == 0:
        return ""
    scale = max(abs(a), abs(b))
    return f" (differs by {d:.3g}" + (f", relatively {d / scale:.2g})" if scale >= ROUNDING else ")")


# What a PROVED certificate says, and what it leaves out. The kernel reasons about exact
# reals; the import check runs the code as XLA does at sampled points. A float effect the
# exact reals do not have (rounding; overflow to inf; underflow to 0, after which a log or
# a division of the underflowed value is infinite and ``0 * inf`` is NaN: red team RT-10)
# is outside the claim, and the certificate says so.
# Constants are read as the simplest number within 4 ulps of the float (so ``1 - 0.9`` is
# 1/10), never as a whole or half number the float is not (red team RT-11).
SCOPE = ("for every size (each below 2^31), in exact real arithmetic, each float constant read as the simplest number "
         "within 4 ulps of it: float rounding, overflow and underflow are outside the claim")


@dataclass
class Certificate:
    """The outcome of certifying one claim (or a claim per argument in ``wrt``)."""
    name: str
    status: str
    statement: str = ""
    theorem: Optional[Theorem] = None
    wrt: dict = field(default_factory=dict)
    axioms: list = field(default_factory=list)
    side_conditions: list = field(default_factory=list)
    counterexample: Optional[Counterexample] = None
    evidence: str = ""
    seconds: float = 0.0
    sizes: dict = field(default_factory=dict)
    detail: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        if self.status in ("PROVED", "CHECKED") and self.theorem is None and not self.wrt:
            raise ValueError(f"a {self.status} certificate needs a kernel theorem")
        if self.status == "REFUTED" and self.counterexample is None:
            raise ValueError("a REFUTED certificate needs a counterexample")

    @property
    def ok(self) -> bool:
        return self.status in ("PROVED", "CHECKED")

    @property
    def scope(self) -> str:
        """What a PROVED or CHECKED statement covers, and what it leaves out."""
        return SCOPE

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "statement": self.statement,
            "wrt": {k: (v.status if isinstance(v, Certificate) else v) for k, v in self.wrt.items()},
            "axioms": list(self.axioms),
            "side_conditions": list(self.side_conditions),
            "counterexample": self.counterexample.as_dict() if self.counterexample else None,
            "evidence": self.evidence,
            "seconds": round(self.seconds, 6),
            "sizes": {str(k): v for k, v in self.sizes.items()},
            "scope": self.scope,
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict())

    def summary(self) -> str:
        line = f"{self.status:8s} {self.name}"
        if self.counterexample:
            line += f"  -- {self.counterexample}"
        elif self.status == "UNKNOWN" and (self.evidence or self.detail):
            line += f"  -- {self.evidence or self.detail}"
        return line

    # Notebook display: the statement as math.
    def _repr_latex_(self):
        if self.theorem is not None:
            return "$" + self.theorem.latex() + r"\quad\text{(" + self.status + ")}$"
        return None

    def _repr_html_(self):
        from verigrad.report.notebook import certificate_html
        return certificate_html(self)


def combine_status(statuses) -> str:
    """The status of a claim made of parts: the weakest part decides."""
    statuses = list(statuses)
    if not statuses:
        return "UNKNOWN"
    if "REFUTED" in statuses:
        return "REFUTED"
    for s in ("UNKNOWN", "TESTED", "CHECKED"):
        if s in statuses:
            return s
    return "PROVED"
