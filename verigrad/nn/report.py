"""Certificates of the layers, the composition rules and the networks, as records
(untrusted reporting; each PROVED record holds a kernel Theorem).

``certificates()`` certifies every zoo layer at all sizes, proves every composition rule
(and refutes its control), and certifies every network by construction. Each record:

    kind        "layer" | "rule" | "network"
    name        e.g. "dense", "drop-path site", "vit"
    status      PROVED / CHECKED / TESTED / REFUTED / UNKNOWN (the weakest of its parts)
    wrt         {variable: status}: the input and every parameter
    axioms      the axioms the theorems rest on (union)
    side_conditions (with ``where``: the definitions ``#k = ...`` of the subterms they share)
    sizes       the size symbols the statement quantifies over
    seconds
    float32_error   max relative error of the float32 backward against float64 (layers)
    statement, latex   the kernel statement of one representative theorem (the input's)
    control     for a rule: its control and the control's status (REFUTED expected)
    detail      why a part is not proved, if one is not
    blocks      for a network: its tree (combinator and leaf names), for diagrams
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

from verigrad.certify.certificate import combine_status
from verigrad.kernel import Theorem


@dataclass
class Record:
    kind: str
    name: str
    status: str
    wrt: dict = field(default_factory=dict)
    axioms: list = field(default_factory=list)
    side_conditions: list = field(default_factory=list)
    sizes: list = field(default_factory=list)
    seconds: float = 0.0
    float32_error: float | None = None
    statement: str = ""
    latex: str = ""
    control: dict = field(default_factory=dict)
    detail: str = ""
    blocks: dict = field(default_factory=dict)
    where: list = field(default_factory=list)      # "#k = ..." for the subterms the side conditions share
    theorems: dict = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "theorems"}
        out["seconds"] = round(self.seconds, 4)
        return out


def from_theorems(kind, name, theorems: dict, seconds, unshown: str | None = None, **extra) -> Record:
    """A record from ``{variable: Theorem | Failure}``. ``unshown``: why the theorems' side
    conditions are not shown to fail only on a null set (a composed network's,
    ``Certified.unshown``); the record is then UNKNOWN, whatever its theorems."""
    wrt = {v: ("PROVED" if isinstance(t, Theorem) else "UNKNOWN") for v, t in theorems.items()}
    proved = [t for t in theorems.values() if isinstance(t, Theorem)]
    axioms = sorted({a for t in proved for a in t.axioms()})
    from verigrad.report.printing import conditions
    conds, where = conditions([c for t in proved for c in t.conds])      # shared subterms named once
    sizes = sorted({s.name for t in proved for s in t.lhs.sizes | t.rhs.sizes})
    first = next(iter(theorems.values()), None)
    failures = [f"{v}: {t}" for v, t in theorems.items() if not isinstance(t, Theorem)]
    extra.setdefault("where", where)
    if unshown is not None:
        failures.insert(0, unshown)
    return Record(kind, name, "UNKNOWN" if unshown is not None else combine_status(wrt.values()), wrt, axioms,
                  conds, sizes, seconds,
                  statement=first.statement() if isinstance(first, Theorem) else "",
                  latex=first.latex() if isinstance(first, Theorem) else "",
                  detail="; ".join(failures)[:2000], theorems=theorems, **extra)


def layer_records(names=None, progress=None) -> list[Record]:
    """Every zoo layer, certified at all sizes (its own size symbols)."""
    from verigrad.nn import compose
    from verigrad.nn.layers.numerics import float32_error
    from verigrad.nn.layers.zoo import ZOO
    out = []
    for name in names or sorted(ZOO):
        entry = ZOO[name]
        if progress:
            progress(f"layer {name}")
        t0 = time.perf_counter()
        try:
            cert = compose.certify_leaf(entry.symbolic(), name, rebuild=lambda sizes, e=entry: e.at(**sizes))
            rec = from_theorems("layer", name, cert.theorems, time.perf_counter() - t0)
        except Exception as e:  # noqa: BLE001 - a layer the importer cannot take is reported, not fatal
            rec = Record("layer", name, "UNKNOWN", seconds=time.perf_counter() - t0,
                         detail=f"{type(e).__name__}: {str(e).splitlines()[0]}")
        try:
            rec.float32_error = float(float32_error(entry.at(**entry.examples[0])))
        except Exception:  # noqa: BLE001
            rec.float32_error = None
        out.append(rec)
    return out


def rule_records(progress=None) -> list[Record]:
    """The composition rules, each proved once over opaque branches, and its control."""
    from verigrad.nn import rules
    out = []
    for rule in rules.standard_rules():
        if progress:
            progress(f"rule {rule.name}")
        control = rules.refute_control(rule)
        rec = from_theorems("rule", rule.name, {"x": rule.theorem}, rule.seconds,
                             control={"bug": rule.control[0], "status": control.status,
                                      "counterexample": str(control.counterexample or control.evidence)})
        out.append(rec)
    return out


def network_records(names=None, progress=None) -> list[Record]:
    """Every network at a symbolic batch size, certified by construction."""
    import jax
    from verigrad.nn import compose, nets
    (batch,) = jax.export.symbolic_shape("B")
    out = []
    for name in names or sorted(nets.NETS):
        if progress:
            progress(f"network {name}")
        t0 = time.perf_counter()
        net = nets.NETS[name](batch)
        cert = compose.certify(net.layer)
        rec = from_theorems("network", name, cert.theorems, time.perf_counter() - t0, cert.unshown,
                             blocks=tree(net.layer))
        out.append(rec)
    return out


def tree(layer) -> dict:
    """A layer's combinator tree: ``{"name", "kind", "children", "site"}``."""
    from verigrad.nn.compose import kind_of
    kind = kind_of(layer)
    node = {"name": layer.name, "kind": kind, "children": [tree(c) for c in layer.children] if kind != "leaf" else []}
    if "site" in layer.hyper:
        node["site"] = layer.hyper["site"]
    return node


def certificates(progress=None) -> list[Record]:
    return layer_records(progress=progress) + rule_records(progress=progress) + network_records(progress=progress)
