"""The human report of ``verigrad certify`` (untrusted; prints, proves nothing)."""
from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table


# Everything below that comes from the kernel, the importer or the user (statements,
# side conditions, names) is escaped: rich would read ``x[i, 2*j]`` or ``[u >= 0]`` as
# markup and drop it.

STYLE = {"PROVED": "green", "CHECKED": "green", "TESTED": "yellow", "REFUTED": "red", "UNKNOWN": "yellow"}


def print_report(cert, target: str = "", console: Console | None = None):
    console = console or Console(highlight=False, soft_wrap=True)
    sizes = ", ".join(f"{k}: ({v})" for k, v in cert.sizes.items())
    console.print(f"[bold]verigrad certify[/] {escape(target or cert.name)}  [dim]{escape(sizes)}[/]")
    ok = cert.validation and not cert.validation.startswith("FAILED")
    console.print(("[green]import checked:[/] " if ok else "[bold red]IMPORT REJECTED:[/] ") + escape(cert.validation))
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("claim", "status", "seconds"):
        table.add_column(col, justify="right" if col == "seconds" else "left")
    for c in cert.claims():
        what = f"fwd computes {cert.name} (output {c.name.split()[-1]})" if c.name.startswith("forward output") \
            else f"d{c.name} = J^T dy"
        table.add_row(escape(what), f"[{STYLE[c.status]}]{c.status}[/]", f"{c.seconds:.3f}")
    console.print(table)
    hyps = list(getattr(cert, "hypotheses", []) or [])
    if hyps:
        console.print("[bold]preconditions:[/] " + escape("; ".join(hyps)))
    settings = getattr(cert, "settings", {}) or {}
    if settings:
        console.print("[bold]read with:[/] " + escape("; ".join(f"{k} {v}" for k, v in settings.items())))
    conds = [c for c in cert.side_conditions if c not in hyps]
    if conds:
        console.print("[bold]side conditions:[/] " + escape("; ".join(conds)))
    if cert.axioms:
        # what the proved claims rest on; a certificate that is not PROVED says whose axioms they are
        n = sum(c.status in ("PROVED", "CHECKED") for c in cert.claims())
        whose = "rests on" if cert.status in ("PROVED", "CHECKED") else \
            "the proved claim rests on" if n == 1 else f"the {n} proved claims rest on"
        many = "axiom" if len(cert.axioms) == 1 else "axioms"
        console.print(f"[bold]{whose} {len(cert.axioms)} {many}:[/] " + escape(", ".join(cert.axioms)))
    if cert.status in ("PROVED", "CHECKED"):
        console.print(f"[bold]holds[/] {escape(cert.scope)}")
    if cert.counterexample is not None:
        console.print(f"[bold red]counterexample:[/] {escape(str(cert.counterexample))}")
        ce = cert.counterexample
        if getattr(ce, "inputs", None):
            for line in ce.details():
                console.print(line, markup=False)
    if cert.status == "TESTED" and cert.detail:
        console.print(f"[yellow]TESTED:[/] {escape(cert.detail)}")
    for c in cert.claims():
        if c.status == "UNKNOWN":
            note = "; ".join(x for x in (c.evidence, c.detail) if x)
            console.print(f"[yellow]{escape(c.name)}:[/] {escape(note)}")
    console.print(f"[dim]{cert.seconds:.2f} s[/]")
