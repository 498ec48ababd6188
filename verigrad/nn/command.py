"""``verigrad certificates``: every layer, composition rule, network and seed-003
theorem, with status, axioms, sizes, seconds and the float32 error of each layer."""
from __future__ import annotations

import json

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
    from verigrad.console import Progress, cell, console, say, show_table
    from verigrad.nn import report, seed003
    from verigrad.nn.layers.zoo import ZOO
    from verigrad.nn.nets import NETS
    from verigrad.options import output_folder
    try:
        parts = _names(args.only, PARTS, "part") or list(PARTS)
    except UsageError as e:                     # a fixed set of words: an argument error
        from verigrad.errors import CommandLineError
        raise CommandLineError(f"--only: {e}") from None
    layers = _names(args.layers, ZOO, "layer")
    nets = _names(args.nets, NETS, "network")
    if args.proofs:
        output_folder(args.proofs, "--proofs")                  # before any work
    total = (len(layers or ZOO) if "layers" in parts else 0) + (len(nets or NETS) if "networks" in parts else 0)
    if "rules" in parts:
        from verigrad.nn import rules
        total += len(rules.standard_rules())
    total += "seed" in parts
    records, seed = [], []
    with Progress("certify", total, quiet=args.json) as progress:
        if "layers" in parts:
            records += report.layer_records(layers, progress=progress.start)
        if "rules" in parts:
            records += report.rule_records(progress=progress.start)
        if "networks" in parts:
            records += report.network_records(nets, progress=progress.start)
        if "seed" in parts:
            progress.start("seed 003: the ViT block")
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
    out = console()
    rows = []
    for r in records:
        proved = sum(s == "PROVED" for s in r.wrt.values())
        rows.append([r.name, r.kind, cell(r.status, "green" if r.status == "PROVED" else "red"),
                     f"{proved}/{len(r.wrt)}", str(len(r.axioms)), " ".join(r.sizes), f"{r.seconds:.2f}",
                     "" if r.float32_error is None else f"{r.float32_error:.1e}", r.control.get("status", "")])
    if records:
        show_table(out, ["name", "kind", "status", "proved", "axioms", "sizes", "s", "f32 err", "control"], rows,
                   title="certificates (for all sizes)", right=("axioms", "s", "f32 err"), optional=("sizes", "f32 err"))
    if seed:
        rows = []
        for t in seed:
            good = t.status == ("REFUTED" if t.name.startswith("control") else "PROVED")
            rows.append([t.name, cell(t.status, "green" if good else "red"), f"{t.seconds:.2f}", t.claim])
        show_table(out, ["theorem", "status", "s", "claim"], rows,
                   title="seed 003: the ViT block with two drop-path sites", right=("s",))
    say(out, "all certificates as expected" if ok else "some certificates are not proved",
        "bold green" if ok else "bold red")
    return 0 if ok else 1
