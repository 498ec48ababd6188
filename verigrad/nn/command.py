"""``verigrad certificates``: every layer, composition rule, network and seed-003
theorem, with status, axioms, sizes, seconds and the float32 error of each layer."""
from __future__ import annotations

import json
import sys

from verigrad.errors import UsageError

NAME = "certificates"
HELP = "certify the layers, the composition rules, the networks and the seed-003 block; print a table"
PARTS = ("layers", "rules", "networks", "seed")


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.add_argument("--only", default=",".join(PARTS), metavar="PARTS",
                   help=f"comma-separated subset of {', '.join(PARTS)} (default: all)")
    p.add_argument("--layers", default="", metavar="NAMES", help="comma-separated zoo layers (default: all)")
    p.add_argument("--nets", default="", metavar="NAMES", help="comma-separated networks (default: all)")
    p.add_argument("--proofs", metavar="DIR", help="write the proof trace of every proved certificate to DIR "
                   "(replay with `verigrad check DIR/*.json`)")


def _names(text, known, what):
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown {what} {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return names or None


def write_proofs(directory, records, seed) -> list:
    """One trace file per proved certificate (its theorems as the claims)."""
    from pathlib import Path

    from verigrad.kernel import Theorem
    from verigrad.trace import write_trace
    groups = [(f"{r.kind}-{r.name}", [(f"{r.kind} {r.name}: {v}", th) for v, th in r.theorems.items()
                                     if isinstance(th, Theorem)]) for r in records]
    groups += [(f"seed003-{t.name}", [(f"seed003 {t.name}: {t.claim}", t.result)])
               for t in seed if isinstance(t.result, Theorem)]
    written = []
    try:
        for stem, claims in groups:
            if claims:
                safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)
                written.append(write_trace(Path(directory) / f"{safe}.trace.json", claims))
    except OSError as e:
        raise UsageError(f"cannot write proof traces to {directory}: {e.strerror or e}") from None
    return written


def run(args) -> int:
    from rich.console import Console
    from rich.table import Table
    from verigrad.nn import report, seed003
    from verigrad.nn.layers.zoo import ZOO
    from verigrad.nn.nets import NETS
    parts = _names(args.only, PARTS, "part") or list(PARTS)
    layers = _names(args.layers, ZOO, "layer")
    nets = _names(args.nets, NETS, "network")
    console = Console(stderr=args.json)
    records, seed = [], []
    with console.status("certifying ...") as status:
        step = status.update if sys.stderr.isatty() or not args.json else None
        if "layers" in parts:
            records += report.layer_records(layers, progress=step)
        if "rules" in parts:
            records += report.rule_records(progress=step)
        if "networks" in parts:
            records += report.network_records(nets, progress=step)
        if "seed" in parts:
            seed = seed003.theorems()
    ok = all(r.status == "PROVED" for r in records) and all(
        t.status == ("REFUTED" if t.name.startswith("control") else "PROVED") for t in seed)
    ok = ok and all(r.control.get("status", "REFUTED") == "REFUTED" for r in records)
    if args.proofs:
        write_proofs(args.proofs, records, seed)
    if args.json:
        print(json.dumps({"certificates": [r.as_dict() for r in records],
                          "seed003": [{"name": t.name, "claim": t.claim, "status": t.status,
                                       "seconds": round(t.seconds, 4)} for t in seed],
                          "ok": ok}))
        return 0 if ok else 1
    table = Table(title="certificates (for all sizes)")
    for col in ("kind", "name", "status", "parts proved", "axioms", "sizes", "s", "float32 err", "control"):
        table.add_column(col, justify="right" if col in ("s", "float32 err", "axioms") else "left")
    for r in records:
        proved = sum(s == "PROVED" for s in r.wrt.values())
        style = "green" if r.status == "PROVED" else "red"
        table.add_row(r.kind, r.name, f"[{style}]{r.status}", f"{proved}/{len(r.wrt)}", str(len(r.axioms)),
                      " ".join(r.sizes), f"{r.seconds:.2f}",
                      "" if r.float32_error is None else f"{r.float32_error:.1e}", r.control.get("status", ""))
    if records:
        console.print(table)
    if seed:
        st = Table(title="seed 003: the ViT block with two drop-path sites")
        for col in ("theorem", "status", "s", "claim"):
            st.add_column(col)
        for t in seed:
            good = t.status == ("REFUTED" if t.name.startswith("control") else "PROVED")
            st.add_row(t.name, f"[{'green' if good else 'red'}]{t.status}", f"{t.seconds:.2f}", t.claim)
        console.print(st)
    console.print("[bold green]all certificates as expected" if ok else "[bold red]some certificates are not proved")
    return 0 if ok else 1
