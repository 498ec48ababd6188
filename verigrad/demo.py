"""``make demo``: the kernel showcase.

Proves the backward passes of dense, softmax, layer norm and attention for every
size, shows each statement and time, and shows that wrong backward passes are refuted
with a concrete counterexample.
"""
from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

from verigrad.certify import showcase
from verigrad.certify.vjp import certify_equal


def main() -> int:
    console = Console()
    console.rule("[bold]verigrad kernel showcase: backward passes proved for ALL sizes")
    table = Table(show_lines=False)
    for col in ("claim", "status", "ms", "axioms"):
        table.add_column(col)
    ok = True
    claims = showcase.proved_claims() + showcase.composite_ln_attention()
    with console.status("proving ...") as status:
        for claim in claims:
            status.update(f"proving {claim.name} ...")
            cert = certify_equal(claim.name, claim.lhs, claim.rhs, claim.argument)
            ok &= cert.status == "PROVED"
            style = "green" if cert.status == "PROVED" else "red"
            table.add_row(claim.name, f"[{style}]{cert.status}", f"{cert.seconds * 1000:.1f}", str(len(cert.axioms)))
    console.print(table)
    dense_dx = showcase.dense()[0]
    cert = certify_equal(dense_dx.name, dense_dx.lhs, dense_dx.rhs, dense_dx.argument)
    console.print("[bold]dense dx, as the kernel states it:")
    console.print(cert.theorem.statement(), soft_wrap=True)
    console.print("[bold]rests on:[/] " + ", ".join(cert.axioms))
    console.rule("[bold]wrong backward passes are refuted")
    for claim in showcase.mutant_claims():
        cert = certify_equal(claim.name, claim.lhs, claim.rhs, claim.argument)
        ok &= cert.status == "REFUTED"
        console.print(f"[red]{cert.status}[/] {claim.name}: {cert.counterexample}")
    console.print("[bold green]all claims behaved as expected" if ok else "[bold red]something unexpected happened")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
