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
    """Concrete sizes and inputs (from ``inputs_seed``) at which the two sides differ."""
    sizes: dict
    argument: str
    index: tuple
    expected: float
    got: float
    inputs_seed: int

    def as_dict(self) -> dict:
        return {"sizes": dict(self.sizes), "argument": self.argument, "index": list(self.index),
                "expected": self.expected, "got": self.got, "inputs_seed": self.inputs_seed}

    def __str__(self):
        sz = ", ".join(f"{k}={v}" for k, v in self.sizes.items()) or "no sizes"
        return (f"at {sz} (inputs seed {self.inputs_seed}), {self.argument}[{', '.join(map(str, self.index))}]: "
                f"expected {self.expected:.6g}, got {self.got:.6g}")


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
