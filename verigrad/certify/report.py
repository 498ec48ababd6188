"""The human report of ``verigrad certify`` (untrusted; prints, proves nothing)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

STYLE = {"PROVED": "green", "CHECKED": "green", "TESTED": "yellow", "REFUTED": "red", "UNKNOWN": "yellow"}


def print_report(cert, target: str = "", console: Console | None = None):
    console = console or Console(highlight=False, soft_wrap=True)
    sizes = ", ".join(f"{k}: ({v})" for k, v in cert.sizes.items())
    console.print(f"[bold]verigrad certify[/] {target or cert.name}  [dim]{sizes}[/]")
    ok = cert.validation and not cert.validation.startswith("FAILED")
    console.print(("[green]import checked:[/] " if ok else "[bold red]IMPORT REJECTED:[/] ") + cert.validation)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("claim", "status", "seconds"):
        table.add_column(col, justify="right" if col == "seconds" else "left")
    for c in cert.claims():
        what = f"fwd computes {cert.name} (output {c.name.split()[-1]})" if c.name.startswith("forward output") \
            else f"d{c.name} = J^T dy"
        table.add_row(what, f"[{STYLE[c.status]}]{c.status}[/]", f"{c.seconds:.3f}")
    console.print(table)
    hyps = list(getattr(cert, "hypotheses", []) or [])
    if hyps:
        console.print("[bold]preconditions:[/] " + "; ".join(hyps))
    settings = getattr(cert, "settings", {}) or {}
    if settings:
        console.print("[bold]read with:[/] " + "; ".join(f"{k} {v}" for k, v in settings.items()))
    conds = [c for c in cert.side_conditions if c not in hyps]
    if conds:
        console.print("[bold]side conditions:[/] " + "; ".join(conds))
    if cert.axioms:
        console.print(f"[bold]rests on {len(cert.axioms)} axioms:[/] " + ", ".join(cert.axioms))
    if cert.counterexample is not None:
        console.print(f"[bold red]counterexample:[/] {cert.counterexample}")
        ce = cert.counterexample
        if getattr(ce, "inputs", None):
            for line in ce.details():
                console.print(line, markup=False)
    for c in cert.claims():
        if c.status == "UNKNOWN":
            note = "; ".join(x for x in (c.evidence, c.detail) if x)
            console.print(f"[yellow]{c.name}:[/] {note}")
    console.print(f"[dim]{cert.seconds:.2f} s[/]")
